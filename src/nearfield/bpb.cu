// bpb: the original box-per-block kernel (Shan & Lei section III-B). One block per non-empty
// box, one thread per particle of the box. The block stages its own box in shared memory and
// every thread adds the other particles to its register accumulator; then each neighbor box in
// turn is staged and added. A box with more particles than the block has threads is processed in
// chunks: target chunks one after another, source boxes in tiles of blockDim bodies.
#include "physics/interaction.h"
#include "nearfield/bpb_agent.cuh"

namespace nf {
namespace {

template <int D, class T, bool Guarded, bool Counting>
__global__ void bpb_kernel(NearFieldView<T> v) {
  extern __shared__ __align__(16) unsigned char smem[];
  Body<T>* tile = reinterpret_cast<Body<T>*>(smem);
  const std::uint32_t box = v.nonempty[blockIdx.x];
  const box_tiles::BoxRange own = box_tiles::box_range(v.box_start, box);
  const std::uint32_t nb_begin = v.neighbor_offset[box], nb_end = v.neighbor_offset[box + 1];

  for (std::uint32_t t0 = own.begin; t0 < own.end; t0 += blockDim.x) {
    const std::uint32_t i = t0 + threadIdx.x;
    const bool active = i < own.end;
    // The accumulator starts from the particle's output (the kernel adds into it: core/body.h).
    BpbAgent<D, T, Guarded, Counting> agent{{v.eps2},
                                            tile,
                                            active ? v.bodies[i] : Body<T>{0, 0, 0, 0},
                                            active ? output_start(v.acc + i, v.acc_zero) : Acc4<T>{0, 0, 0, 0},
                                            0};

    // The father box: every other particle of the box (i - s0 wraps past m when i is not in
    // the tile), then each neighbor box in turn.
    box_tiles::for_each_staged_tile(v.bodies, own, tile, box_tiles::NoState{}, [&](std::uint32_t s0, std::uint32_t m) {
      if (active) agent.add_tile(m, i - s0);
    });
    for (std::uint32_t k = nb_begin; k < nb_end; ++k)
      box_tiles::for_each_staged_tile(v.bodies, box_tiles::box_range(v.box_start, v.neighbor_ids[k]), tile,
                                      box_tiles::NoState{}, [&](std::uint32_t, std::uint32_t m) {
                                        if (active) agent.add_tile(m, ~0u);
                                      });
    if (active) v.acc[i] = agent.acc;
    if constexpr (Counting) box_tiles::add_count(v.counter, agent.count);
  }
}

}  // namespace

template <int D, class T>
void launch_bpb(const NearFieldView<T>& v) {
  if (v.computed_boxes == 0) return;
  const std::uint32_t threads = box_tiles::block_threads(v.max_box_count);
  const std::size_t smem = threads * sizeof(Body<T>);
  gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) {
    bpb_kernel<D, T, guarded(), counting()><<<v.computed_boxes, threads, smem>>>(v);
  });
  NF_CUDA_LAUNCHED();
}

NF_EXPORT_GPU_NEAR_FIELD_DRIVER(bpb, launch_bpb)

}  // namespace nf
