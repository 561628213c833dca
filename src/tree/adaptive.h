#pragma once
//! The adaptive tree of the full methods (docs/design.md §16, "Adaptive tree"): on the tree with
//! levels of a compact Z-order tree at a deepest level K, a box is split only while it holds more
//! than S particles (the leaf size), so that leaves sit at the level their density asks for.
//!
//! Per box of every level 0..K, four flags, decided from the root down:
//! - target: the root, or a child of a split box. Targets get M2L from their interaction lists.
//! - split: a target with more than S particles, below level K. Its children are targets.
//!   A target that is not split is a *leaf*: its particles take L2P from it, and their near field
//!   is every particle of the boxes adjacent to it (itself included) at the leaf's level.
//! - kept: the root, or a child of an expanded box. Kept boxes have multipoles: every source of a
//!   target's interaction list and every box adjacent to a leaf is kept.
//! - expanded: a kept box that is split or adjacent to a split box. Its multipole comes from its
//!   children (M2M); a kept box that is not expanded takes P2M from its particles (at most S of
//!   them, since its parent is a leaf or not split, except at level K).
//! Each pair of particles (i, j) is then counted once for target i: in i's leaf's near field if
//! j's box at that level is adjacent, else through the one M2L at the coarsest level where their
//! boxes are apart with adjacent parents (the uniform method's argument, cut off at i's leaf). The
//! near field is one-sided: i's leaf and j's leaf may sit at different levels.

#include <cstdint>
#include <vector>

#include "core/hd.h"
#include "tree/levels.h"

namespace nf {

namespace adaptive {
constexpr std::uint8_t kKept = 1, kTarget = 2, kSplit = 4, kExpanded = 8;
//! A leaf: a target that is not split.
NF_HD inline bool leaf(std::uint8_t f) { return (f & (kTarget | kSplit)) == kTarget; }
}  // namespace adaptive

//! flags[l][b] for box b of level l of t (adaptive::kKept | kTarget | kSplit | kExpanded).
std::vector<std::vector<std::uint8_t>> adaptive_flags(const TreeLevels& t, std::uint32_t leaf_size);

//! The deepest level an adaptive tree of these particles needs: the shallowest level where no box
//! holds more than `leaf_size` particles, at most `max_level` (coincident points never separate).
//! `counts_at(l)` gives the largest box count at level l.
template <class CountsAt>
int adaptive_depth(std::uint32_t leaf_size, int max_level, CountsAt&& counts_at) {
  for (int l = 0; l < max_level; ++l)
    if (counts_at(l) <= leaf_size) return l;
  return max_level;
}

}  // namespace nf
