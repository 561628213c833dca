#pragma once
//! The non-empty boxes of an input at one level, counted without sorting the particles: what the
//! interaction counts of a benchmark and the decomposition over several devices need.

#include <cstdint>
#include <vector>

#include "core/particles.h"
#include "tree/domain.h"
#include "tree/tree.h"

namespace nf {

//! The non-empty boxes of a whole input at one level: keys, particle counts and compact neighbor
//! lists (the particles themselves are never sorted for it).
struct BoxSet {
  int dim = 2, level = 0;
  std::vector<std::uint64_t> key;     //!< M Morton keys, ascending (compact id = index)
  std::vector<std::uint32_t> count;   //!< particles per box
  std::vector<std::uint64_t> first;   //!< M + 1 offsets: the box's particles in a one-GPU tree's order
  NeighborLists near;                 //!< full lists over compact ids (Tree::near_full)

  std::uint32_t boxes() const { return static_cast<std::uint32_t>(key.size()); }
  std::uint64_t particles() const { return first.empty() ? 0 : first.back(); }
  std::uint32_t max_count() const;
};

//! Up to this many boxes (4^K or 8^K) the boxes are counted in a dense array of counters; above,
//! by sorting the keys (deep levels, clustered data).
constexpr std::uint64_t kDenseCountLimit = std::uint64_t(1) << 26;

//! The boxes of `p` at `level` over `domain`, counted in parallel (OpenMP) without sorting the
//! particles. `particle_box`, when given, receives each particle's compact box id (input order).
//! `dense_limit` chooses the counting method (tests force each).
BoxSet count_boxes(const Particles& p, int level, const Domain& domain,
                   std::vector<std::uint32_t>* particle_box = nullptr, std::uint64_t dense_limit = kDenseCountLimit);
//! The same from a built tree (tests compare the two).
BoxSet box_set(const Tree& t);

//! Useful directed near-field interactions: the sum over boxes of n_b (n_b - 1) + n_b * (its
//! neighbors' particles); a Newton-3 pair counts twice (docs/design.md §1).
std::uint64_t near_field_interactions(const BoxSet& b);

}  // namespace nf
