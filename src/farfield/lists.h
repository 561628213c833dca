#pragma once
//! The far field's interaction (M2L) lists (docs/design.md §16): box b at level l >= 2 takes the
//! multipoles of the boxes c at level l whose parents are b's parent or one of its neighbors, and
//! that are not b's neighbors themselves (at most 27 in 2D, 189 in 3D). Then every pair of
//! particles is counted exactly once: in the near field (adjacent leaf boxes) or through the one
//! M2L between their ancestors at the coarsest level where those are apart but their parents are
//! adjacent or equal. Levels 0 and 1 have no far field (every box is adjacent to every other);
//! empty boxes appear in no list (the tree holds non-empty boxes only).

#include <cstdint>
#include <vector>

#include "tree/levels.h"

namespace nf::farfield {

//! The most boxes an interaction list holds: 6^d - 3^d (27 in 2D, 189 in 3D).
constexpr int max_list_boxes(int d) { return d == 2 ? 27 : 189; }

//! Refuses (UsageError) a level whose lists hold more entries than their 32-bit offsets take
//! (2^32 - 1): a 3D level of some 23 million non-empty boxes with most neighbourhoods occupied (an
//! explicit deep --level over tens of millions of particles); its offsets had wrapped on the GPU,
//! writing past the list buffer. Called by the CPU and the GPU builders with the level's total.
void check_list_entries(std::uint64_t entries, int level);

//! lists[l]: per box at level l, the compact ids at level l of its M2L sources (empty below 2).
using InteractionLists = std::vector<NeighborLists>;

//! The M2L lists of every level of t.
InteractionLists build_interaction_lists(const TreeLevels& t);

//! How many M2L translations level l holds in all (the sizes of its lists, summed), counted from
//! the level's non-empty keys (ascending) without building a list: for each box b, the non-empty
//! children of its parent's neighbors and its parent, less b's non-empty neighbors and b itself
//! (those are among them: a box's neighbors are children of its parent or of its parent's
//! neighbors). 0 below level 2. What the full methods' `--level auto` (methods/full_level_rule.h)
//! sums over the levels it weighs.
std::uint64_t count_translations(int dim, int level, const std::vector<std::uint64_t>& key);

//! The translations the GPU's sibling-group M2L kernel (farfield/m2l_gpu.h) computes at level l,
//! empty ones included: a block takes child c of `per_block` consecutive parents (in key order)
//! and computes, for each of the 6^d - 3^d candidate offsets where any of its targets has a
//! source, all per_block slots (an offset no target uses costs nothing). Counted from the keys as
//! count_translations is; 0 below level 2. On the H100 M2L's time per such slot is nearly one
//! figure per order across uniform, Plummer and clustered levels (methods/full_level_rule.h).
double count_group_slots(int dim, int level, const std::vector<std::uint64_t>& key, std::uint32_t per_block);

}  // namespace nf::farfield
