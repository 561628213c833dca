#pragma once
//! The full-list traversal of the near field, written once for the CPU and GPU kernels that walk
//! it particle by particle (cpu-serial, cpu-omp, ppt, bpt): the other particles of the target's
//! own box, then every particle of each box in its neighbor list.

#include <cstdint>

#include "core/body.h"
#include "core/hd.h"

namespace nf {

//! Calls source(j) for every sorted particle j in the near field of sorted particle i, which lies
//! in `box`: box_start is boxIdx, offset/ids the box's (full) neighbor list.
template <class Source>
NF_HD NF_INLINE void for_each_near_source(const std::uint32_t* box_start, const std::uint32_t* offset,
                                          const std::uint32_t* ids, std::uint32_t box, std::uint32_t i,
                                          Source&& source) {
  for (std::uint32_t j = box_start[box]; j < box_start[box + 1]; ++j)
    if (j != i) source(j);
  for (std::uint32_t k = offset[box]; k < offset[box + 1]; ++k) {
    const std::uint32_t nb = ids[k];
    for (std::uint32_t j = box_start[nb]; j < box_start[nb + 1]; ++j) source(j);
  }
}

//! `a` plus the acceleration on sorted particle i (in `box`) from its whole near field, one source
//! at a time with the interaction `g`; with Counting, every evaluated interaction is added to
//! `count`. Kernels pass the particle's current output as `a` and store the result: they add into
//! the output (core/body.h's contract) with the output's load issued before the sum, not after it.
template <bool Counting, class Gravity, class T>
NF_HD NF_INLINE Acc4<T> near_field_sum(const Gravity& g, const Body<T>* bodies, const std::uint32_t* box_start,
                                       const std::uint32_t* offset, const std::uint32_t* ids, std::uint32_t box,
                                       std::uint32_t i, unsigned long long& count, Acc4<T> a = {0, 0, 0, 0}) {
  const Body<T> me = bodies[i];
  for_each_near_source(box_start, offset, ids, box, i, [&](std::uint32_t j) {
    g(me, bodies[j], a);
    if constexpr (Counting) ++count;
  });
  return a;
}

}  // namespace nf
