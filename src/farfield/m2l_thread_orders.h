#pragma once
//! The orders that M2L runs a thread per target box (farfield/m2l_thread_gpu.h), apart so that the
//! host's cost model (methods/full_level_rule.h) reads the same limits as the kernel.

#include <cstdint>

#include "farfield/multi_index.h"
#include "farfield/offset_order.h"

namespace nf::farfield {

//! The highest order the thread-per-target kernel is built for: above it a thread's locals and
//! derivatives outgrow its registers (3D float p = 7 spills to a 480-byte stack frame; ptxas, sm_90).
template <int D, class T>
constexpr int kThreadMaxOrder = sizeof(T) == 4 ? (D == 3 ? 6 : 12) : (D == 3 ? 4 : 8);

//! The highest order of the wide variant (3D only): a thread still owns a target's locals in
//! registers, but reads the offset's derivatives row by row from the L1 (broadcasts) instead of
//! keeping them, which leaves room for 165 locals (3D float p = 8). In 2D it adds nothing. Where
//! the orders per offset apply (3D float p = 8) it walks each list an order at a time.
template <int D, class T>
constexpr int kWideMaxOrder = D == 3 ? (sizeof(T) == 4 ? 8 : 6) : kThreadMaxOrder<D, T>;

//! Whether M2L's wide variant at order p (dimension dim, scalars of `bytes` bytes) takes the orders
//! per offset (farfield/offset_order.h: 3D float p = 8), and so first copies each level's lists
//! grouped by order (m2l_thread_class_words; the memory checks count the copy).
inline bool thread_lists_by_order(int dim, int bytes, int p) {
  const int thread = dim == 3 ? (bytes == 4 ? kThreadMaxOrder<3, float> : kThreadMaxOrder<3, double>)
                              : (bytes == 4 ? kThreadMaxOrder<2, float> : kThreadMaxOrder<2, double>);
  const int wide = dim == 3 ? (bytes == 4 ? kWideMaxOrder<3, float> : kWideMaxOrder<3, double>)
                            : (bytes == 4 ? kWideMaxOrder<2, float> : kWideMaxOrder<2, double>);
  return p > thread && p <= wide && coefficient_pairs(dim, p) >= kOffsetOrdersFrom && !offset_orders_full();
}

//! The thread kernel's row stride: `terms` entries rounded up to whole 16-byte loads of `bytes`-byte
//! scalars. Where it differs from terms, the kernel first copies a level's moments to such rows.
constexpr int thread_row_stride(int terms, int bytes) {
  const int per_load = 16 / bytes;
  return (terms + per_load - 1) / per_load * per_load;
}

//! Whether the thread kernel stages its sources' moments through shared memory at order p
//! (dimension dim, scalars of `bytes` bytes; farfield/m2l_thread_gpu.h, docs/design.md §16 "Staged
//! moments"): never in the wide variant (p above kThreadMaxOrder), and only where a translation
//! takes at most 50 multiply-adds per 16-byte chunk of the source's row (3D float p <= 6, 3D double
//! <= 4, 2D <= 8). Above that the loads are not what bounds the kernel. H200, M2L ms unstaged ->
//! staged on every level (trial builds): 2D float clusters 2^22 level 9 p = 10 (59 a chunk) 0.381
//! -> 0.392, p = 12 (79) 0.528 -> 0.586; below it, 2D float p = 8 (41) 0.307 -> 0.292, and 3D float
//! p = 6 (44) on uniform 2^24 level 6 6.01 -> 4.15.
constexpr bool thread_staged_order(int dim, int bytes, int p) {
  const int top = dim == 3 ? (bytes == 4 ? kThreadMaxOrder<3, float> : kThreadMaxOrder<3, double>)
                           : (bytes == 4 ? kThreadMaxOrder<2, float> : kThreadMaxOrder<2, double>);
  const int chunks = thread_row_stride(int(terms_of(dim, p)), bytes) * bytes / 16;
  return p >= 1 && p <= top && coefficient_pairs(dim, p) <= std::uint64_t(50 * chunks);
}

//! The fill from which the thread kernel stages by default: a level whose boxes fill at least this
//! share of their parents' 2^D places (farfield/m2l_thread_gpu.h: Staging::by_fill).
inline constexpr double kStagedFill = 0.75;

//! A level's fill: its `boxes` over the 2^dim places of each of its `parents` (0 without parents).
inline double level_fill(int dim, double boxes, double parents) {
  return parents > 0 ? boxes / (double(1u << dim) * parents) : 0.0;
}

}  // namespace nf::farfield
