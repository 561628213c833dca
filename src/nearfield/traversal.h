#pragma once
//! The full-list traversal of the near field, written once for the CPU and GPU kernels that walk
//! it particle by particle (cpu-serial, cpu-omp, ppt, bpt): the other particles of the target's
//! own box, then every particle of each box in its neighbor list.

#include <cstdint>

#include "core/body.h"
#include "core/hd.h"

namespace nf {

//! Calls source(j) for every sorted particle j in the near field of sorted particle i, which lies
//! in `box`. `first` holds each box's first particle in one numbering of the boxes, with `box` and
//! the (full) neighbor lists offset/ids in the same one: the dense layout (boxIdx, Tree::box_start,
//! dense box ids) or the compact one (Tree::box_first, compact ids).
template <class Source>
NF_HD NF_INLINE void for_each_near_source(const std::uint32_t* first, const std::uint32_t* offset,
                                          const std::uint32_t* ids, std::uint32_t box, std::uint32_t i,
                                          Source&& source) {
  for (std::uint32_t j = first[box]; j < first[box + 1]; ++j)
    if (j != i) source(j);
  for (std::uint32_t k = offset[box]; k < offset[box + 1]; ++k) {
    const std::uint32_t nb = ids[k];
    for (std::uint32_t j = first[nb]; j < first[nb + 1]; ++j) source(j);
  }
}

//! The acceleration on sorted particle i (in `box`) from its whole near field, one source at a
//! time with the interaction `g`; with Counting, every evaluated interaction is added to `count`.
template <bool Counting, class Gravity, class T>
NF_HD NF_INLINE Acc4<T> near_field_sum(const Gravity& g, const Body<T>* bodies, const std::uint32_t* first,
                                       const std::uint32_t* offset, const std::uint32_t* ids, std::uint32_t box,
                                       std::uint32_t i, unsigned long long& count) {
  const Body<T> me = bodies[i];
  Acc4<T> a{0, 0, 0, 0};
  for_each_near_source(first, offset, ids, box, i, [&](std::uint32_t j) {
    g(me, bodies[j], a);
    if constexpr (Counting) ++count;
  });
  return a;
}

}  // namespace nf
