#pragma once
//! The GPU tree builder: 64-bit Morton keys on the device, cub::DeviceRadixSort over only the
//! key's dim*K bits, the non-empty boxes from a scan of the run boundaries, neighbor lists by
//! binary search of each box's neighbor keys among the non-empty ones; the paper's dense arrays
//! on request. Its output equals the CPU builder's (tree.h) element for element.
//!
//! Stages (one file each, tree_gpu_*.cu; times in GpuBuildTimes): domain, keys, sort, boxes
//! (box_starts), neighbors, dense.

#include <cstdint>
#include <memory>
#include <vector>

#include "tree/domain.h"
#include "core/device_arrays.h"
#include "core/gpu_runtime.h"
#include "core/particles.h"
#include "tree/tree.h"

namespace nf {

namespace tree_gpu {
struct Scratch;  // the builder's scratch memory (tree_gpu_stages.h)
}

//! The device arrays of a tree (same meaning as Tree's), plus what launches need on the host.
//! Buffers are allocated for the worst case and reused by every build: their size() is a
//! capacity; the counts below say how much of each is valid after a build.
struct DeviceTree {
  int dim = 2, level = 0;
  Domain domain;
  std::uint64_t nbox = 1;  //!< 4^K or 8^K
  std::uint32_t n = 0;     //!< particles
  std::uint32_t max_box_count = 0;
  std::uint32_t nonempty_count = 0;  //!< M, non-empty boxes
  std::uint32_t near_full_links = 0, near_half_links = 0;  //!< valid entries of near_full_ids / near_half_ids
  bool dense = false;                                      //!< the dense arrays below were built
  //! The compact neighbor lists below were built (false: a builder made without them, for a full
  //! method that finds its near sources itself; their offsets and ids are then empty).
  bool lists = true;

  // Compact layout (always): M non-empty boxes by ascending key.
  gpu::DeviceBuffer<std::uint32_t> order;          //!< N: sorted position -> input row
  gpu::DeviceBuffer<std::uint64_t> box_key;        //!< M valid: Morton keys of the non-empty boxes, ascending
  gpu::DeviceBuffer<std::uint32_t> box_first;      //!< M + 1 valid: offsets into the sorted particles
  gpu::DeviceBuffer<std::uint32_t> particle_compact_box;  //!< N: sorted position -> compact id of its box
  gpu::DeviceBuffer<std::uint32_t> near_full_offset, near_half_offset;  //!< M + 1 valid: CSR offsets
  gpu::DeviceBuffer<std::uint32_t> near_full_ids, near_half_ids;        //!< compact ids, ascending per box

  // Dense layout (only when dense): the paper's arrays over all nbox boxes.
  gpu::DeviceBuffer<std::uint32_t> box_start, particle_box, nonempty;  //!< nbox + 1, N, M
  gpu::DeviceBuffer<std::uint32_t> full_offset, full_ids, half_offset, half_ids;
};

//! GPU time of each build stage (CUDA events), in milliseconds. `total` has its own events
//! around the whole build (it includes the host-side reads between stages), so it is at least
//! the sum of the stages.
struct GpuBuildTimes {
  double domain = 0;      //!< the default domain's reduction, or the copy of a given domain
  double keys = 0;        //!< Morton key of each particle's box
  double sort = 0;        //!< cub::DeviceRadixSort of (key, index) over dim*K bits
  double box_starts = 0;  //!< non-empty boxes: run boundaries, box_key, box_first, particle_compact_box
  double neighbors = 0;   //!< compact neighbor lists (counts, scans, fill)
  double dense = 0;       //!< the dense arrays (0 when not requested)
  double total = 0;
};

//! Owns the tree arrays and the scratch space for one (dim, level, N), allocated once, so that
//! `build` runs kernels only (growing the neighbor-id buffers when a build needs more) and can be
//! repeated (a simulation rebuilds every step).
class GpuTreeBuilder {
 public:
  //! `dense`: also build the paper's dense layout (refused past max_dense_level or GPU memory).
  //! `lists` false: build no neighbor lists (the sort, the boxes and the largest box only; a
  //! method that plans its near field from the boxes itself, fmm-adaptive); not with `dense`.
  GpuTreeBuilder(int dim, int level, std::size_t n, bool dense, bool lists = true);
  ~GpuTreeBuilder();
  GpuTreeBuilder(const GpuTreeBuilder&) = delete;
  GpuTreeBuilder& operator=(const GpuTreeBuilder&) = delete;

  //! Builds the tree of `p` (same dim and N as constructed). `domain` null: the default domain,
  //! from p.bounds when p.bounds_valid (the drift reduced them), else reduced on the GPU. Fills
  //! `times` when given (this adds event records, not syncs).
  void build(const DeviceParticles& p, const Domain* domain, GpuBuildTimes* times = nullptr);
  const DeviceTree& tree() const { return tree_; }

 private:
  DeviceTree tree_;
  std::unique_ptr<tree_gpu::Scratch> s_;
};

//! GPU times (ms) of `reps` runs of cub::DeviceRadixSort::SortPairs on the keys of the last build
//! of `t` (the same 64-bit keys in input order, index values, and dim*K bits the build sorts),
//! after `warmup` runs: the floor the build's sort stage is compared with.
std::vector<double> time_bare_sort(const DeviceTree& t, int warmup, int reps);

//! Copies a device tree back into the CPU structure (for tests and the tree command). A tree built
//! without lists comes back with empty near_full / near_half (offsets too): not a Tree that the
//! CPU near-field code may read.
Tree download_tree(const DeviceTree& t);

}  // namespace nf
