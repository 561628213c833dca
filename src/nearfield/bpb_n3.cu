// bpb-n3: the improved BPB of Shan & Lei (section III-C), kept faithful to the paper's steps:
//   1. shared array A (positions of the box being read) and B (counterforces on them);
//   2. the block loads its own box into A;
//   3. thread t computes its particle against A[t+1 .. n) (each pair once), adding the force to
//      its register d_acc and the counterforce to B[j] with shared-memory atomics; after a
//      barrier, B is added into the global acc with atomics;
//   4-6. each neighbor of the half list (larger index) in turn: loaded into A, B zeroed, every
//      thread against all of A, counterforces into B, B into global acc;
//   7. d_acc is added into global acc, atomically (other blocks add into the same particles).
// Boxes larger than the block are processed in chunks: a target chunk meets the later chunks of
// its own box and every chunk of each neighbor. acc must be zero before the launch.
#include "physics/interaction.h"
#include "nearfield/box_tiles.cuh"

namespace nf {
namespace {

template <int D, class T, bool Guarded, bool Counting>
struct BpbN3Agent {
  const SoftenedGravity<D, T, Guarded> g;
  Body<T>* A;    // staged source particles
  Acc4<T>* B;    // their counterforces
  Body<T> me;
  Acc4<T> d_acc;
  unsigned long long count;

  // Steps 2/4 happen in box_tiles::for_each_staged_tile: the staged bodies go to A, and B is
  // cleared when they are loaded.
  __device__ __forceinline__ void clear_counterforces(std::uint32_t m) {
    if (threadIdx.x < m) B[threadIdx.x] = Acc4<T>{0, 0, 0, 0};
  }
  // Steps 3/5: pairs (me, A[j]) for j in [first, m): force into d_acc, counterforce into B[j].
  __device__ __forceinline__ void pairs(std::uint32_t first, std::uint32_t m) {
    for (std::uint32_t j = first; j < m; ++j) {
      Acc4<T> counter{0, 0, 0, 0};
      g.mutual(me, A[j], d_acc, counter);
      atomicAdd(&B[j].x, counter.x);
      atomicAdd(&B[j].y, counter.y);
      if constexpr (D == 3) atomicAdd(&B[j].z, counter.z);
      if constexpr (Counting) ++count;
    }
  }
  // End of steps 3/5: after a barrier, B goes into the global acc of the staged particles.
  __device__ __forceinline__ void flush(Acc4<T>* acc, std::uint32_t s0, std::uint32_t m) {
    __syncthreads();
    if (threadIdx.x < m) {
      Acc4<T>& dst = acc[s0 + threadIdx.x];
      atomicAdd(&dst.x, B[threadIdx.x].x);
      atomicAdd(&dst.y, B[threadIdx.x].y);
      if constexpr (D == 3) atomicAdd(&dst.z, B[threadIdx.x].z);
    }
  }
};

template <int D, class T, bool Guarded, bool Counting>
__global__ void bpb_n3_kernel(NearFieldView<T> v) {
  extern __shared__ __align__(16) unsigned char smem[];
  Body<T>* A = reinterpret_cast<Body<T>*>(smem);
  Acc4<T>* B = reinterpret_cast<Acc4<T>*>(A + blockDim.x);
  const std::uint32_t box = v.nonempty[blockIdx.x];
  const box_tiles::BoxRange own = box_tiles::box_range(v.box_start, box);
  const std::uint32_t nb_begin = v.neighbor_offset[box], nb_end = v.neighbor_offset[box + 1];

  for (std::uint32_t t0 = own.begin; t0 < own.end; t0 += blockDim.x) {
    const std::uint32_t i = t0 + threadIdx.x;
    const bool active = i < own.end;
    BpbN3Agent<D, T, Guarded, Counting> agent{
        {v.eps2}, A, B, active ? v.bodies[i] : Body<T>{0, 0, 0, 0}, {0, 0, 0, 0}, 0};

    auto clear = [&](std::uint32_t m) { agent.clear_counterforces(m); };
    // Steps 2-3: the father box from the target chunk on, each pair once (triangular within the
    // target chunk).
    box_tiles::for_each_staged_tile(v.bodies, {t0, own.end}, A, clear, [&](std::uint32_t s0, std::uint32_t m) {
      if (active) agent.pairs(s0 == t0 ? threadIdx.x + 1 : 0, m);
      agent.flush(v.acc, s0, m);
    });
    // Steps 4-6: the neighbors with a larger index, one after another.
    for (std::uint32_t k = nb_begin; k < nb_end; ++k)
      box_tiles::for_each_staged_tile(v.bodies, box_tiles::box_range(v.box_start, v.neighbor_ids[k]), A, clear,
                                      [&](std::uint32_t s0, std::uint32_t m) {
                                        if (active) agent.pairs(0, m);
                                        agent.flush(v.acc, s0, m);
                                      });
    // Step 7: the thread's own accumulator.
    if (active) {
      atomicAdd(&v.acc[i].x, agent.d_acc.x);
      atomicAdd(&v.acc[i].y, agent.d_acc.y);
      if constexpr (D == 3) atomicAdd(&v.acc[i].z, agent.d_acc.z);
    }
    if constexpr (Counting) box_tiles::add_count(v.counter, agent.count);
  }
}

}  // namespace

template <int D, class T>
void launch_bpb_n3(const NearFieldView<T>& v) {
  if (v.computed_boxes == 0) return;
  const std::uint32_t threads = box_tiles::block_threads(v.max_box_count);
  const std::size_t smem = threads * (sizeof(Body<T>) + sizeof(Acc4<T>));
  gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) {
    bpb_n3_kernel<D, T, guarded(), counting()><<<v.computed_boxes, threads, smem>>>(v);
  });
  NF_CUDA_LAUNCHED();
}

NF_EXPORT_GPU_NEAR_FIELD_DRIVER(bpb_n3, launch_bpb_n3)

}  // namespace nf
