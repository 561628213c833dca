#pragma once
//! The Z-order quadtree (2D) / octree (3D) of the paper's section III-A, on the CPU.
//!
//! Level K has 2^K boxes per side, keyed in Morton order (64-bit keys). Particles are sorted by
//! key (stably, so ties keep input order). Two layouts describe the boxes:
//! - compact (always built): only the M non-empty boxes, in ascending key order, with their
//!   neighbor lists restricted to non-empty boxes. Its memory follows N, so deep levels (2D to 31,
//!   3D to 21) work on sparse or clustered data.
//! - dense (built on request): the paper's arrays over all 4^K / 8^K boxes, `box_start` being its
//!   boxIdx, with full and half neighbor lists of every box. The paper's kernels read this one; it
//!   stops at level 14 (2D) / 9 (3D) and at the memory it needs.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tree/domain.h"
#include "core/particles.h"

namespace nf {

//! Compressed rows: box b's neighbors are ids[offset[b] .. offset[b+1]), ascending.
struct NeighborLists {
  std::vector<std::uint32_t> offset;  //!< boxes + 1 entries
  std::vector<std::uint32_t> ids;     //!< the links
  std::size_t links() const { return ids.size(); }
};

//! Everything a near-field kernel needs besides the bodies themselves.
struct Tree {
  int dim = 2;
  int level = 0;
  Domain domain;
  std::uint64_t nbox = 1;  //!< 4^K or 8^K, empty boxes included

  // Compact layout (always). "Compact id" k in [0, M) numbers the non-empty boxes by key.
  std::vector<std::uint32_t> order;          //!< sorted position -> input row (the permutation back)
  std::vector<std::uint64_t> box_key;        //!< M Morton keys of the non-empty boxes, ascending
  std::vector<std::uint32_t> box_first;      //!< M + 1 offsets into the sorted particles
  std::vector<std::uint32_t> particle_compact_box;  //!< sorted position -> compact id of its box
  NeighborLists near_full;                   //!< per compact box: adjacent non-empty boxes, compact ids
  NeighborLists near_half;                   //!< the part of near_full with larger ids (= larger keys)

  // Dense layout (only when built with dense = true; empty otherwise).
  bool dense = false;
  std::vector<std::uint32_t> box_start;     //!< boxIdx: nbox + 1 offsets into the sorted particles
  std::vector<std::uint32_t> particle_box;  //!< sorted position -> box index (the sorted keys)
  std::vector<std::uint32_t> nonempty;      //!< indices of the non-empty boxes, ascending (= box_key)
  NeighborLists full, half;                 //!< every box's neighbors, and those with a larger index

  std::size_t particles() const { return order.size(); }
  //! M, the number of non-empty boxes.
  std::uint32_t nonempty_boxes() const { return static_cast<std::uint32_t>(box_key.size()); }
  //! Particles in compact box k.
  std::uint32_t compact_count(std::uint32_t k) const { return box_first[k + 1] - box_first[k]; }
  //! Particles in box b of the dense layout.
  std::uint32_t box_count(std::uint32_t b) const { return box_start[b + 1] - box_start[b]; }
  std::uint32_t max_box_count() const;
  //! Fewest particles in any box, empty boxes included (0 unless every box is non-empty).
  std::uint32_t min_box_count() const;
  //! Heap bytes held by the tree's arrays (capacities).
  std::uint64_t heap_bytes() const;
};

//! B: links in the full neighbor lists of all boxes at this level, (3n-2)^d - n^d with n = 2^K.
//! Exact while it fits 64 bits (2D to level 30, 3D to level 19); use full_link_count_text beyond.
std::uint64_t full_link_count(int dim, int level);
//! B (or B/2 with `half`) in decimal, exact at every level up to max_level (128-bit arithmetic).
std::string full_link_count_text(int dim, int level, bool half = false);

//! Estimated peak bytes of building a tree: the compact layout (per particle and per possible
//! non-empty box, with its neighbor lists unless `lists` is false: a GPU build without them,
//! GpuTreeBuilder), plus the dense arrays when `dense`. A double: deep dense levels exceed 2^64.
double tree_bytes(int dim, int level, std::uint64_t particles, bool dense, bool lists = true);

//! Refuses (UsageError) a level below 0 or deeper than max_level(dim), a dense layout deeper than
//! max_dense_level(dim), or a tree that would need more than `available_bytes`; the messages name
//! the level and the bytes needed. `where` names the memory ("host memory", "GPU memory").
void check_level(int dim, int level, std::uint64_t particles, std::uint64_t available_bytes, const char* where,
                 bool dense);

//! Physical memory of this machine in bytes.
std::uint64_t host_memory_bytes();

//! Builds the tree of `p` at `level` over `domain` (particles must lie inside it): always the
//! compact layout, and the dense one too when `dense` (the paper's kernels need it).
Tree build_tree(const Particles& p, int level, const Domain& domain, bool dense);

//! The compact neighbor lists (full and half, over compact ids) of the non-empty boxes whose
//! ascending Morton keys are `box_key`: what build_tree fills into near_full and near_half.
void build_compact_lists(int dim, int level, const std::vector<std::uint64_t>& box_key, NeighborLists& near_full,
                         NeighborLists& near_half);

//! Builds only the dense neighbor lists of a level (they do not depend on the particles).
void build_neighbor_lists(int dim, int level, NeighborLists& full, NeighborLists& half);

//! Morton key of particle i's box at `level` (what particle_keys holds for it).
std::uint64_t particle_key(const Particles& p, std::size_t i, int level, const Domain& domain);

//! Morton keys of the particles' boxes at `level`, in input order.
std::vector<std::uint64_t> particle_keys(const Particles& p, int level, const Domain& domain);

//! Stable LSD radix sort of (keys, values) by the low `bits` bits of the keys (the CPU twin of
//! the GPU builder's cub::DeviceRadixSort: equal keys keep their order).
void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values, int bits);

}  // namespace nf
