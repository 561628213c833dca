#pragma once
//! The adaptive tree on the GPU (tree/adaptive.h; docs/design.md §16, "Adaptive tree"): from the
//! full tree with levels of a DeviceTree, the flags of every box (two kernels a level, from the
//! root down: target and split from the parent; expanded from the split boxes adjacent to it,
//! found by binary search of their keys), then each level's kept boxes compacted (a scan of the
//! kept flags; one small copy back a level), and each kept level's split boxes listed (a select
//! whose count stays on the device: M2L groups the targets by their split parents). The kept
//! levels are DeviceLevels whose `last` and `flags` are set, so that the uniform method's M2M,
//! L2L, M2L and its lists run on them as they are (they skip boxes without children, pass locals
//! from split boxes only, and give M2L to targets only). Here also the two passes of the leaves:
//! L2P (one thread a particle, each particle reading its own leaf's level) and the near field.
//! CUDA builds only.

#include <cstdint>
#include <vector>

#include "core/body.h"
#include "core/gpu_runtime.h"
#include "farfield/passes_gpu.h"
#include "tree/levels_gpu.h"

namespace nf::farfield {

//! One work item of the near field (adaptive_near_gpu.cu): item `local` of kept box `box`, which
//! counts the boxes of all levels from level 0 on.
struct NearItem {
  std::uint32_t box, local;
};

class DeviceAdaptive {
 public:
  //! The kept boxes of each level 0..K (dim, leaf and domain those of the full levels).
  DeviceLevels levels;
  //! Builds the adaptive tree of `full` (whose buffers it reads, not keeps) for leaf size S.
  void build(const DeviceLevels& full, std::uint32_t leaf_size, std::uint32_t n);
  //! Per sorted particle: the compact id of its leaf among its level's kept boxes, and that level.
  const std::uint32_t* leaf_box() const { return leaf_box_.data(); }
  const std::uint8_t* leaf_level() const { return leaf_level_.data(); }
  //! Plans the near field of the tree built last (n particles): each leaf's one-sided source
  //! count and work items (a chunk of at most 128 targets against a segment of at most 1024
  //! sources), bucketed by the targets a lane holds (1..4). Throws UsageError past 2^32 items.
  //! With `mutual`, the pairs of two leaves of one level adjacent to each other (a leaf and itself
  //! included) are left to a Newton-3 near-field kernel over the leaf graph below, and the items
  //! take only the other kept boxes (split ones, and those below a coarser leaf) as sources.
  void plan_near(std::uint32_t n, bool mutual);
  bool mutual() const { return mutual_; }
  //! The sources of one near-field item, at most (1024; NEARFIELD_NEAR_SEGMENT sets another, for
  //! comparisons), as planned last.
  std::uint32_t near_segment() const { return segment_; }
  //! The leaf graph of the mutual pairs (planned with `mutual`): the non-empty leaves in particle
  //! order, leaf k holding the sorted particles [leaf_first()[k], leaf_first()[k + 1]), and the
  //! half lists of each (leaf_half_offset(), leaves() + 1 entries, into leaf_half_ids()): the
  //! adjacent non-empty leaves of its own level with larger ids, ascending. The layout of a
  //! compact tree's half lists (nearfield/nearfield_gpu.h), so the Newton-3 kernels run on it.
  std::uint32_t leaves() const { return leaves_; }
  const std::uint32_t* leaf_first() const { return leaf_first_.data(); }
  const std::uint32_t* leaf_half_offset() const { return leaf_half_offset_.data(); }
  const std::uint32_t* leaf_half_ids() const { return leaf_half_ids_.data(); }
  const NearItem* near_items() const { return near_items_.data(); }
  const std::uint32_t* near_sources() const { return near_sources_.data(); }
  //! Bucket r (r = 0..3: r + 1 targets a lane) is near_items()[near_buckets()[r], near_buckets()[r + 1]).
  const std::uint64_t* near_buckets() const { return near_bucket_; }
  //! The stream of bucket r's launch (a blocking stream, farfield::near_leaves).
  void* near_stream(int r) const { return near_streams_[r].handle(); }

 private:
  struct Storage {
    gpu::DeviceBuffer<std::uint64_t> key;
    gpu::DeviceBuffer<std::uint32_t> first, last, parent, child, id;  // id: full box -> kept id (a scan)
    gpu::DeviceBuffer<std::uint32_t> split;  // the kept level's split boxes (DeviceLevel::split)
    gpu::DeviceBuffer<std::uint8_t> flags, full_flags;
  };
  std::vector<Storage> store_;
  gpu::DeviceBuffer<std::uint32_t> split_counts_;  // per level, DeviceLevel::split_count
  gpu::DeviceBuffer<std::uint32_t> leaf_box_;
  gpu::DeviceBuffer<std::uint8_t> leaf_level_;
  gpu::DeviceBuffer<std::uint32_t> near_sources_;       // per kept box of every level
  gpu::DeviceBuffer<std::uint64_t> near_at_, near_bounds_;  // the items' counts, scanned; the buckets
  gpu::DeviceBuffer<NearItem> near_items_;
  std::uint64_t near_bucket_[5] = {};
  void plan_leaf_pairs(std::uint32_t n);
  bool mutual_ = false;
  std::uint32_t segment_ = 1024;
  gpu::Stream near_streams_[4];
  std::uint32_t leaves_ = 0;
  gpu::DeviceBuffer<std::uint32_t> leaf_first_, leaf_half_offset_, leaf_half_ids_, leaf_count_;
  gpu::Workspace temp_;
};

//! Most levels an adaptive tree's passes take (0..kMaxAdaptiveLevel).
constexpr int kMaxAdaptiveLevel = 21;

//! Where each level's coefficients are: the kept boxes' local coefficients of level l from
//! L + start[l], and the boxes' keys and sides.
struct AdaptiveGeometry {
  double origin[3] = {0, 0, 0};
  double side[kMaxAdaptiveLevel + 1] = {};
  double inv_side[kMaxAdaptiveLevel + 1] = {};  // 1 / side, which the kernels multiply by
  const std::uint64_t* key[kMaxAdaptiveLevel + 1] = {};
  std::uint64_t start[kMaxAdaptiveLevel + 1] = {};
};

//! acc[i] += the far field of sorted particle i from its leaf's local expansion (leaves of levels
//! >= 2; a leaf above has no far field).
template <int D, class T>
void l2p_leaves(const Body<T>* sorted, std::uint32_t n, const DeviceAdaptive& a, const AdaptiveGeometry& g, int p,
                const T* L, Acc4<T>* acc);

//! acc[i] += the near field of sorted particle i: every particle of the kept boxes adjacent to its
//! leaf at the leaf's level, and of the leaf itself (softened gravity, physics/interaction.h);
//! when a.mutual(), of those boxes only the ones that are not leaves (the rest is the leaf graph's,
//! for a Newton-3 kernel). Runs the items a.plan_near() planned, a warp each, one launch per bucket
//! over all levels, each bucket on a stream of its own (a.near_stream(r): blocking streams, so
//! the launches overlap one another and a Newton-3 kernel's class streams, and the default
//! stream's later work waits for them). Targets of more than one item, and every target when
//! a.mutual() (the Newton-3 kernel adds to them too), add with atomics; the others with a store.
template <int D, class T>
void near_leaves(const Body<T>* sorted, const DeviceAdaptive& a, T eps2, Acc4<T>* acc);

}  // namespace nf::farfield
