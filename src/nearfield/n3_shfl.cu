// n3-shfl: Newton's third law with register j-accumulation (the technique of GROMACS' nbnxm
// reduce_force_j_warp_shfl, written for box pairs). A warp takes one work item; lane l holds R
// targets in registers. Every source of a batch is read by all lanes at once (a shared-memory
// broadcast); each lane sums the source's reaction over its R targets in registers, and the warp
// adds the 32 partial sums with a butterfly of shuffles. The lane whose slot the source has keeps
// the total, so after a batch of 32 sources each lane adds one reaction to global memory. No
// shared-memory atomics; the cost per pair is one mutual interaction plus (5 D shuffles + 5 D
// adds + 1 load) / R.
#include "nearfield/n3_common.cuh"

namespace nf {
namespace {

struct N3ShflPolicy {
  static constexpr int warps = 4;  // warps per block (each works on its own items)
};

template <int D, class T, int R, bool Guarded, bool Counting>
struct ShflAgent {
  const SoftenedGravity<D, T, Guarded> g;
  warp_pairs::LaneTargets<D, T, R> t;
  unsigned lane;
  unsigned long long count;

  // The lane's targets against the 32 staged sources (same pair rules as n3-rotate); returns
  // the reaction on this lane's own source.
  template <bool Self>
  __device__ __forceinline__ Acc4<T> batch(const Body<T>* tile, std::uint32_t q, std::uint32_t real_sources) {
    Acc4<T> mine{0, 0, 0, 0};
    for (unsigned slot = 0; slot < 32; ++slot) {
      const Body<T> bj = tile[slot];
      Acc4<T> react{0, 0, 0, 0};
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if constexpr (Self) {
          if (r > int(q)) continue;
          if (r == int(q) && lane >= slot) continue;
        }
        g.mutual(t.body[r], bj, t.acc[r], react);
        if constexpr (Counting) count += t.valid(r) && slot < real_sources;
      }
#pragma unroll
      for (unsigned w = 16; w > 0; w /= 2) {
        react.x += __shfl_xor_sync(warp_pairs::kFullMask, react.x, w);
        react.y += __shfl_xor_sync(warp_pairs::kFullMask, react.y, w);
        if constexpr (D == 3) react.z += __shfl_xor_sync(warp_pairs::kFullMask, react.z, w);
      }
      if (lane == slot) mine = react;
    }
    return mine;
  }
};

template <int D, class T, int R, bool Guarded, bool Counting>
__global__ void __launch_bounds__(32 * N3ShflPolicy::warps)
    n3_shfl_kernel(NearFieldView<T> v, const PairItem* __restrict__ items, std::uint32_t n_items, std::uint32_t* next) {
  __shared__ Body<T> tiles[N3ShflPolicy::warps][32];
  const unsigned lane = threadIdx.x & 31u;
  Body<T>* tile = tiles[threadIdx.x / 32];
  ShflAgent<D, T, R, Guarded, Counting> agent{{v.eps2}, {}, lane, 0};
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
struct ShflLaunch {
  static void run(const NearFieldView<T>& v, const PairItem* items, std::uint32_t n, std::uint32_t* next) {
    auto kernel = n3_shfl_kernel<D, T, R, Guarded, Counting>;
    const int threads = 32 * N3ShflPolicy::warps;
    kernel<<<warp_pairs::resident_blocks(kernel, threads, 0), threads>>>(v, items, n, next);
    NF_CUDA_LAUNCHED();
  }
};

}  // namespace

template <int D, class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_n3_shfl() {
  return std::make_unique<warp_pairs::ItemKernel<D, T, warp_pairs::max_targets_per_lane<T>(), ShflLaunch>>();
}

template std::unique_ptr<GpuNearFieldKernel<float>> make_n3_shfl<2, float>();
template std::unique_ptr<GpuNearFieldKernel<float>> make_n3_shfl<3, float>();
template std::unique_ptr<GpuNearFieldKernel<double>> make_n3_shfl<2, double>();
template std::unique_ptr<GpuNearFieldKernel<double>> make_n3_shfl<3, double>();

}  // namespace nf
