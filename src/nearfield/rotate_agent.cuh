// Lane rotation for Newton's third law (the technique of OpenMM's nonbonded kernel,
// written for box pairs). A group of W lanes (a warp, or a half or quarter of one for small
// items) takes one work item; lane l holds R targets in registers. The W sources of a batch sit
// in shared memory, and each lane owns the reaction accumulator of one source at a time: at step
// s lane l works on source (l + s) mod W against its R targets, then hands the accumulator to
// lane l - 1 of its group with a shuffle. After W steps every accumulator is back at its source's
// lane, holding the reaction of all W R targets, and is added to global memory once. No two lanes ever update the same source, so there are no shared-memory atomics and no
// reduction tree; the cost per pair is one mutual interaction plus (D shuffles + 1 load) / R.
#pragma once
#include "nearfield/warp_pairs.cuh"

namespace nf {

template <int D, class T, int R, unsigned W, bool Guarded, bool Counting>
struct RotateAgent {
  const SoftenedGravity<D, T, Guarded> g;
  warp_pairs::LaneTargets<D, T, R, W> t;
  unsigned lane;  // within the group
  unsigned long long count;
  static constexpr bool kCounting = Counting;
  static constexpr unsigned kWidth = W;

  // The lane's targets against the W staged sources; returns the reaction on this lane's own
  // source. Self (when `self`): the targets are the sources' chunk, batch q: pairs i < j only
  // (targets of row r < q all precede the batch, row q is the diagonal block, rows r > q come
  // later). Groups narrower than a warp call batch<true> with `self` their own (sweep_sources).
  template <bool Self>
  __device__ __forceinline__ Acc4<T> batch(const Body<T>* tile, std::uint32_t q, std::uint32_t real_sources,
                                           bool self = Self) {
    Acc4<T> react{0, 0, 0, 0};
#pragma unroll 2
    for (unsigned s = 0; s < W; ++s) {
      const unsigned slot = (lane + s) & (W - 1);
      const Body<T> bj = tile[slot];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if constexpr (Self) {
          if (self && r > int(q)) continue;
          if (self && r == int(q) && lane >= slot) continue;
        }
        g.mutual(t.body[r], bj, t.acc[r], react);
        if constexpr (kCounting) count += t.valid(r) && slot < real_sources;
      }
      react.x = __shfl_sync(warp_pairs::kFullMask, react.x, (lane + 1) & (W - 1), W);
      react.y = __shfl_sync(warp_pairs::kFullMask, react.y, (lane + 1) & (W - 1), W);
      if constexpr (D == 3) react.z = __shfl_sync(warp_pairs::kFullMask, react.z, (lane + 1) & (W - 1), W);
    }
    return react;
  }
};

}  // namespace nf
