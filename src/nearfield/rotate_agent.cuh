// Lane rotation for Newton's third law (the technique of OpenMM's nonbonded kernel,
// written for box pairs). A warp takes one work item; lane l holds R targets in registers. The
// 32 sources of a batch sit in shared memory, and each lane owns the reaction accumulator of one
// source at a time: at step s lane l works on source (l + s) mod 32 against its R targets, then
// hands the accumulator to lane l - 1 with a shuffle. After 32 steps every accumulator is back
// at its source's lane, holding the reaction of all 32 R targets, and is added to global memory
// once. No two lanes ever update the same source, so there are no shared-memory atomics and no
// reduction tree; the cost per pair is one mutual interaction plus (D shuffles + 1 load) / R.
#pragma once
#include "nearfield/warp_pairs.cuh"

namespace nf {

template <int D, class T, int R, bool Guarded, bool Counting>
struct RotateAgent {
  const SoftenedGravity<D, T, Guarded> g;
  warp_pairs::LaneTargets<D, T, R> t;
  unsigned lane;
  unsigned long long count;
  static constexpr bool kCounting = Counting;

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

}  // namespace nf
