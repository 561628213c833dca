#pragma once
//! M2L a thread per target box, for low orders (docs/design.md §16, "M2L at low orders"). CUDA
//! builds only.
//!
//! At a low order a translation is a few hundred multiply-adds (210 at 3D p = 4), too little to
//! share among a block's warps: the sibling-group kernel (m2l_gpu.h) pays a block barrier, the
//! gather of an offset's moments and each unit's loop set-up per offset for about 50 multiply-adds
//! a thread. Here one thread owns one target's locals in registers and walks its own interaction
//! list; with the order a template argument every coefficient index is a constant:
//!
//!   for each source s at offset R0:  d = D_m(R0) for |m| <= p (registers, 16-byte loads from the
//!   level's derivative table);  L_k += sum_{|n| <= p - |k|} (-1)^|n| M_n(s) d_{n+k}, each moment
//!   read once (16-byte loads) and used for every k it pairs with.
//!
//! The warp's lanes are the same child c of 32 consecutive parents (as in the group kernel), so
//! on a full level they walk the same offsets in the same order and read d as broadcasts. On
//! well-filled levels, at the orders where loads bound the kernel (Staging below), the moments of
//! the 32 sources a warp takes at each step are staged by the whole warp through shared memory, 32
//! consecutive 16-byte chunks a copy instruction (a lane reading its own row touched 32 cache lines
//! an instruction, and the L1 was the kernel's bound); the table stays in the L1.
//! Levels too small to fill the GPU split each list among up to 8 threads that add into L atomically.
//! Above kThreadMaxOrder (farfield/m2l_thread_orders.h) the locals and d outgrow a thread's
//! registers; there, up to kWideMaxOrder, the wide variant keeps only the locals and reads d a row
//! at a time from the L1, and where the orders per offset apply (3D float p = 8) sums the terms
//! |n| + |k| <= q(R) of each offset, its lists grouped by order (docs/design.md §16).

#include <cstddef>
#include <cstdint>

#include "tree/levels_gpu.h"
#include "farfield/lists_gpu.h"
#include "farfield/m2l_thread_orders.h"
#include "farfield/offset_order.h"

namespace nf::farfield {

//! Whether the thread kernel stages its sources' moments in shared memory (m2l_thread), at the
//! orders where that can pay (docs/design.md §16, "Staged moments"): on every level, on none, or
//! (by_fill, the default) on levels whose boxes fill at least kStagedFill of their parents' 2^D
//! places. On sparser levels a warp's lanes walk different lists and the staging's registers cost
//! more than its loads save (H200, trial builds, 3D float Plummer 2^24 level 7, whose level 7 fills
//! 0.52: M2L at p = 2 1.65 ms unstaged, 1.89 staged everywhere, 1.70 by fill; p = 5 6.55, 7.24, 6.45).
//! (The fill is kStagedFill, the orders thread_staged_order: farfield/m2l_thread_orders.h, which
//! the host's cost model reads too.)
enum class Staging { off, on, by_fill };

//! L += the M2L of one level at order p (1 <= p <= kWideMaxOrder): the targets are the children of
//! `parents` (of parents.split where set), `derivatives` the level's derivative table
//! (derivative_tables: kOffsets<D> x terms<D>(p)). The translation across offset R keeps the terms
//! |n| + |k| <= orders.at(R) (farfield/offset_order.h); orders below p only where the orders per
//! offset apply (the wide variant at 3D p >= 8; std::logic_error elsewhere). `staged`: whether the
//! warps stage their sources' moments in shared memory (3D float p <= 6, 3D double <= 4, 2D <= 8) or
//! each lane reads its own (NEARFIELD_M2L_STAGED=on|off force one, for comparisons). `scratch` holds
//! m2l_thread_scratch(p, level.boxes) entries: the table, and the moments where terms<D>(p) is not
//! a whole number of 16-byte loads, copied to padded rows first (one pass over M; the kernel then
//! reads every row in 16-byte loads). `classes` holds m2l_thread_class_words(...) words (none
//! without orders below p): each list grouped by order, which a thread then walks an order at a time.
template <int D, class T>
void m2l_thread(int p, Staging staged, const OffsetOrders& orders, const DeviceLevel& level, const DeviceLevel& parents,
                const DeviceList& list, const T* derivatives, const T* M, T* L, T* scratch, std::uint32_t* classes);

//! The 32-bit words of m2l_thread's `classes` for a level of `boxes` boxes and `links` list entries.
template <int D, class T>
std::size_t m2l_thread_class_words(int p, const OffsetOrders& orders, std::uint32_t boxes, std::uint32_t links);

//! The scratch entries m2l_thread needs at order p for a level of `boxes` boxes.
template <int D, class T>
std::size_t m2l_thread_scratch(int p, std::uint32_t boxes);

}  // namespace nf::farfield
