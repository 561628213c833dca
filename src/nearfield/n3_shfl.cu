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

template <int D, class T, int R, unsigned W, bool Guarded, bool Counting>
struct ShflAgent {
  const SoftenedGravity<D, T, Guarded> g;
  warp_pairs::LaneTargets<D, T, R, W> t;
  unsigned lane;  // within the group of W lanes (warp_pairs.cuh)
  unsigned long long count;
  static constexpr bool kCounting = Counting;
  static constexpr unsigned kWidth = W;

  // The lane's targets against the W staged sources (same pair rules as n3-rotate); returns
  // the reaction on this lane's own source.
  template <bool Self>
  __device__ __forceinline__ Acc4<T> batch(const Body<T>* tile, std::uint32_t q, std::uint32_t real_sources,
                                           bool self = Self) {
    Acc4<T> mine{0, 0, 0, 0};
    for (unsigned slot = 0; slot < W; ++slot) {
      const Body<T> bj = tile[slot];
      Acc4<T> react{0, 0, 0, 0};
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if constexpr (Self) {
          if (self && r > int(q)) continue;
          if (self && r == int(q) && lane >= slot) continue;
        }
        g.mutual(t.body[r], bj, t.acc[r], react);
        if constexpr (kCounting) count += t.valid(r) && slot < real_sources;
      }
#pragma unroll
      for (unsigned w = W / 2; w > 0; w /= 2) {
        react.x += __shfl_xor_sync(warp_pairs::kFullMask, react.x, w);
        react.y += __shfl_xor_sync(warp_pairs::kFullMask, react.y, w);
        if constexpr (D == 3) react.z += __shfl_xor_sync(warp_pairs::kFullMask, react.z, w);
      }
      if (lane == slot) mine = react;
    }
    return mine;
  }
};

}  // namespace

struct N3ShflPolicy {
  // In float, boxes of up to 64 particles take the small-box warp path (one-sided, 2 targets a
  // lane): the shuffle reduction costs more than Newton-3 saves there. On the H100 (float, medians
  // of 7): 2D uniform-exact level 7 P = 64 0.284 ms against 0.324 with items (bpb 0.283); 3D
  // uniform-exact level 5 P = 64 1.87 against 2.25; 3D Plummer 2M level 8 1.95 against 2.02; 2D
  // clusters 2M level 11 0.594 against 0.627. In double the items win from 33 on (P = 64: 2D
  // 0.684 ms with 32 against 0.728 with 64, 3D 4.72 against 4.79), so double keeps 32.
  template <class T>
  static constexpr std::uint32_t small_max() {
    return SmallBoxPolicy::float_wide_count<T>();
  }
};

template <int D, class T>
using N3Shfl =
    warp_pairs::ItemKernel<D, T, warp_pairs::max_targets_per_lane<T>(), ShflAgent, N3ShflPolicy::small_max<T>()>;

NF_EXPORT_GPU_NEAR_FIELD(n3_shfl, N3Shfl)

}  // namespace nf
