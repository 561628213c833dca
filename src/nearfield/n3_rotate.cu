// n3-rotate: Newton's third law with lane rotation (the technique of OpenMM's nonbonded kernel,
// written for box pairs). A warp takes one work item; lane l holds R targets in registers. The
// 32 sources of a batch sit in shared memory, and each lane owns the reaction accumulator of one
// source at a time: at step s lane l works on source (l + s) mod 32 against its R targets, then
// hands the accumulator to lane l - 1 with a shuffle. After 32 steps every accumulator is back
// at its source's lane, holding the reaction of all 32 R targets, and is added to global memory
// once. No two lanes ever update the same source, so there are no shared-memory atomics and no
// reduction tree; the cost per pair is one mutual interaction plus (D shuffles + 1 load) / R.
#include "nearfield/n3_common.cuh"

namespace nf {
namespace {

struct N3RotatePolicy {
  static constexpr int warps = 4;  // warps per block (each works on its own items)
};

template <int D, class T, int R, bool Guarded, bool Counting>
struct RotateAgent {
  const SoftenedGravity<D, T, Guarded> g;
  warp_pairs::LaneTargets<D, T, R> t;
  unsigned lane;
  unsigned long long count;

  // The lane's targets against the 32 staged sources; returns the reaction on this lane's own
  // source. Self: the targets are the sources' chunk, batch q: pairs i < j only (targets of row
  // r < q all precede the batch, row q is the diagonal block, rows r > q come later).
  template <bool Self>
  __device__ __forceinline__ Acc4<T> batch(const Body<T>* tile, std::uint32_t q, std::uint32_t real_sources) {
    Acc4<T> react{0, 0, 0, 0};
#pragma unroll 2
    for (unsigned s = 0; s < 32; ++s) {
      const unsigned slot = (lane + s) & 31u;
      const Body<T> bj = tile[slot];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if constexpr (Self) {
          if (r > int(q)) continue;
          if (r == int(q) && lane >= slot) continue;
        }
        g.mutual(t.body[r], bj, t.acc[r], react);
        if constexpr (Counting) count += t.valid(r) && slot < real_sources;
      }
      react.x = __shfl_sync(warp_pairs::kFullMask, react.x, (lane + 1) & 31u);
      react.y = __shfl_sync(warp_pairs::kFullMask, react.y, (lane + 1) & 31u);
      if constexpr (D == 3) react.z = __shfl_sync(warp_pairs::kFullMask, react.z, (lane + 1) & 31u);
    }
    return react;
  }
};

template <int D, class T, int R, bool Guarded, bool Counting>
__global__ void __launch_bounds__(32 * N3RotatePolicy::warps)
    n3_rotate_kernel(NearFieldView<T> v, const PairItem* __restrict__ items, std::uint32_t n_items,
                     std::uint32_t* next) {
  __shared__ Body<T> tiles[N3RotatePolicy::warps][32];
  const unsigned lane = threadIdx.x & 31u;
  Body<T>* tile = tiles[threadIdx.x / 32];
  RotateAgent<D, T, R, Guarded, Counting> agent{{v.eps2}, {}, lane, 0};
  for (std::uint32_t it = warp_pairs::next_item(next, lane); it < n_items; it = warp_pairs::next_item(next, lane)) {
    const PairItem item = items[it];
    agent.t.load(v.bodies, item.a_begin, item.a_end, lane);
    const bool self = item.a_begin == item.b_begin;
    std::uint32_t q = 0;
    for (std::uint32_t q0 = item.b_begin; q0 < item.b_end; q0 += 32, ++q) {
      const bool real = warp_pairs::stage_sources(v.bodies, q0, item.b_end, tile, lane);
      const std::uint32_t real_sources = min(32u, item.b_end - q0);
      const Acc4<T> react = self ? agent.template batch<true>(tile, q, real_sources)
                                 : agent.template batch<false>(tile, q, real_sources);
      if (real) warp_pairs::add_atomic<D>(v.acc + q0 + lane, react);
      __syncwarp();  // the tile is restaged next
    }
    agent.t.add_to(v.acc);
  }
  if constexpr (Counting) box_tiles::add_count(v.counter, agent.count);
}

template <int D, class T, int R, bool Guarded, bool Counting>
struct RotateLaunch {
  static void run(const NearFieldView<T>& v, const PairItem* items, std::uint32_t n, std::uint32_t* next) {
    auto kernel = n3_rotate_kernel<D, T, R, Guarded, Counting>;
    const int threads = 32 * N3RotatePolicy::warps;
    kernel<<<warp_pairs::resident_blocks(kernel, threads, 0), threads>>>(v, items, n, next);
    NF_CUDA_LAUNCHED();
  }
};

}  // namespace

template <int D, class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_n3_rotate() {
  return std::make_unique<warp_pairs::ItemKernel<D, T, warp_pairs::max_targets_per_lane<T>(), RotateLaunch>>();
}

template std::unique_ptr<GpuNearFieldKernel<float>> make_n3_rotate<2, float>();
template std::unique_ptr<GpuNearFieldKernel<float>> make_n3_rotate<3, float>();
template std::unique_ptr<GpuNearFieldKernel<double>> make_n3_rotate<2, double>();
template std::unique_ptr<GpuNearFieldKernel<double>> make_n3_rotate<3, double>();

}  // namespace nf
