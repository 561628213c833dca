#pragma once
//! The tree with levels (docs/design.md §16): for a compact Z-order tree at leaf level K, the
//! non-empty boxes of every level 0..K with their particles, parents, children and neighbor lists.
//! A box's key at level l - 1 is its key at level l shifted right by d bits, and the particles are
//! sorted by leaf key, hence by the key at every level: a box at any level owns one contiguous
//! range of the sorted particles, and its children are a contiguous range of the next level's
//! boxes. Memory follows the non-empty boxes (at most N per level), not 4^K / 8^K.

#include <cstdint>
#include <vector>

#include "tree/tree.h"

namespace nf {

//! The non-empty boxes of one level, in key order (compact ids).
struct TreeLevel {
  std::vector<std::uint64_t> key;      //!< M_l Morton keys at this level, ascending
  std::vector<std::uint32_t> first;    //!< M_l + 1 offsets into the sorted particles
  std::vector<std::uint32_t> parent;   //!< M_l compact ids at level l - 1 (empty at level 0)
  std::vector<std::uint32_t> child;    //!< M_l + 1 offsets into level l + 1's boxes (empty at the leaf level)
  NeighborLists near;                  //!< full compact neighbor lists at this level
  std::uint32_t boxes() const { return static_cast<std::uint32_t>(key.size()); }
  std::uint32_t count(std::uint32_t b) const { return first[b + 1] - first[b]; }
};

//! Every level of a compact tree, 0 (the root) to the leaf level.
struct TreeLevels {
  int dim = 2, leaf = 0;
  Domain domain;
  std::vector<TreeLevel> level;  //!< level[l] for l = 0..leaf
  //! Side of a box at level l.
  double side(int l) const { return domain.side / double(std::uint64_t(1) << l); }
  //! Centre of box `key` at level l (coordinate a < dim; the third is 0 in 2D).
  void centre(int l, std::uint64_t key, double (&c)[3]) const;
};

//! The levels of tree t (its compact layout; the leaf level is t's level).
TreeLevels build_levels(const Tree& t);

}  // namespace nf
