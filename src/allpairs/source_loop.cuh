#pragma once
// The inner step every all-pairs kernel shares: one target accumulates one source, skipping
// sources outside the near field when the mask is on.
#include "allpairs/near_mask.h"
#include "physics/interaction.h"

namespace nf::allpairs_detail {

template <int D, class T, bool Guarded, bool Masked>
struct Target {
  Body<T> body;
  Cell cell;
  Acc4<T> acc;

  __device__ __forceinline__ void add(const SoftenedGravity<D, T, Guarded>& g, const Body<T>& src, const Cell& src_cell) {
    if constexpr (Masked) {
      if (!near_cells<D>(cell, src_cell)) return;
    }
    g(body, src, acc);
  }
};

// Loads target i (a harmless zero-mass body past the end, whose result is never stored).
template <int D, class T, bool Guarded, bool Masked>
__device__ __forceinline__ Target<D, T, Guarded, Masked> load_target(const Body<T>* bodies, const Cell* cells,
                                                                     std::uint32_t i, std::uint32_t n) {
  Target<D, T, Guarded, Masked> t;
  t.body = i < n ? bodies[i] : Body<T>{0, 0, 0, 0};
  if constexpr (Masked) t.cell = i < n ? cells[i] : Cell{0, 0, 0, 0};
  t.acc = Acc4<T>{0, 0, 0, 0};
  return t;
}

}  // namespace nf::allpairs_detail
