#pragma once
//! The Z-order quadtree (2D) / octree (3D) of the paper's section III-A, on the CPU.
//!
//! Level K has 2^K boxes per side, numbered in Morton order. Particles are sorted by box (stably,
//! so ties keep input order); `box_start` is the paper's boxIdx; neighbor lists are CSR arrays in
//! two forms, full and half (only larger indices, for Newton-3 kernels).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/domain.h"
#include "common/particles.h"

namespace nf {

//! Compressed rows: box b's neighbors are ids[offset[b] .. offset[b+1]), ascending.
struct NeighborLists {
  std::vector<std::uint32_t> offset;  //!< nbox + 1 entries
  std::vector<std::uint32_t> ids;     //!< B entries (full) or B/2 (half)
  std::size_t links() const { return ids.size(); }
};

//! Everything a near-field kernel needs besides the bodies themselves.
struct Tree {
  int dim = 2;
  int level = 0;
  Domain domain;
  std::uint32_t nbox = 1;                   //!< 4^K or 8^K
  std::vector<std::uint32_t> box_start;     //!< boxIdx: nbox + 1 offsets into the sorted particles
  std::vector<std::uint32_t> order;         //!< sorted position -> input row (the permutation back)
  std::vector<std::uint32_t> particle_box;  //!< sorted position -> box index (the sorted keys)
  std::vector<std::uint32_t> nonempty;      //!< boxes holding at least one particle, ascending
  NeighborLists full, half;

  std::size_t particles() const { return order.size(); }
  std::uint32_t box_count(std::uint32_t b) const { return box_start[b + 1] - box_start[b]; }
  std::uint32_t max_box_count() const;
  std::uint32_t min_box_count() const;
};

//! B: links in the full neighbor lists at this level, (3n-2)^d - n^d with n = 2^K.
std::uint64_t full_link_count(int dim, int level);

//! Bytes of the dense box arrays and per-particle index arrays of a tree.
std::uint64_t tree_bytes(int dim, int level, std::uint64_t particles);

//! Refuses (UsageError) a level below 0, deeper than max_level(dim), or whose arrays would need
//! more than `available_bytes`; `where` names the memory ("host memory", "GPU memory").
void check_level(int dim, int level, std::uint64_t particles, std::uint64_t available_bytes, const char* where);

//! Physical memory of this machine in bytes.
std::uint64_t host_memory_bytes();

//! Builds the tree of `p` at `level` over `domain` (particles must lie inside it).
Tree build_tree(const Particles& p, int level, const Domain& domain);

//! Builds only the neighbor lists of a level (they do not depend on the particles).
void build_neighbor_lists(int dim, int level, NeighborLists& full, NeighborLists& half);

}  // namespace nf
