#pragma once
// The half near field cut into work items of bounded size, built on the GPU from the tree: the
// plan of the Newton-3 warp kernels (n3_*.cu). An item is a target range and a source range of
// the sorted particles, targets at most `chunk` long: a box against itself (each pair once, the
// chunks of a big box pairwise) or a box against a group of non-empty neighbors of its half list
// (neighbors with consecutive ids, whose particles are contiguous, up to a chunk together, or up to
// 4 chunks where that saves padded source batches). A
// run's last chunk is cut in two where that fills more lanes (pair_items.cu: BoxGraph). Every
// pair of the near field belongs to exactly one item, so the time of a launch follows the pair
// count and not the largest box: a box of 100k particles becomes thousands of items.
#include <cstdint>

#include "core/gpu_runtime.h"
#include "nearfield/plan/work_list.cuh"

namespace nf {

//! Targets [a_begin, a_end) against sources [b_begin, b_end); a_begin == b_begin marks a chunk
//! against itself (pairs i < j only). one_sided: the sources act on the targets only (a big box
//! against a small neighbor, whose own particles are computed one per thread).
struct PairItem {
  std::uint32_t a_begin, a_end, b_begin, b_end, one_sided;
};

//! Items of one tree, rebuilt by count, read_total and fill (allocates only when a tree needs more
//! than before).
class PairItemList {
 public:
  //! Size classes: class c holds the items with at most 8 * 2^c targets (8, 16, ..., 512).
  static constexpr int kClasses = 7;

  //! From the compact tree: box_first (M + 1 offsets of the M non-empty boxes) and their half
  //! neighbor lists (compact ids), through plan/work_list.cuh. Items are ordered by target box
  //! (Z-order), own box first, then neighbors in list order; with `classify`, grouped by size
  //! class first (stable). With `small` (a flag per box, SmallBoxes), pairs of two small boxes get
  //! no item, a small box's own pairs none, and a big box against a small one gets a one-sided
  //! item (the big box's targets).
  //! Built in steps (plan/work_list.cuh): the counts queued, the total read, the items filled.
  void count(const std::uint32_t* box_first, std::uint32_t boxes, const std::uint32_t* half_offset,
             const std::uint32_t* half_ids, std::uint32_t chunk, bool classify, const std::uint8_t* small = nullptr);
  void read_total() { list_.read_total(); }
  void fill();
  const PairItem* items() const { return list_.items(); }
  std::uint32_t size() const { return list_.size(); }
  //! First item of class c (c = kClasses: the end); without `classify` every item is in class 0.
  std::uint32_t class_begin(int c) const { return c < list_.classes() ? list_.class_begin(c) : list_.size(); }
  std::uint32_t class_size(int c) const { return class_begin(c + 1) - class_begin(c); }

 private:
  plan::WorkList<PairItem> list_;
  // The arguments of the last count(), for fill().
  const std::uint32_t *box_first_ = nullptr, *half_offset_ = nullptr, *half_ids_ = nullptr;
  std::uint32_t chunk_ = 0;
  const std::uint8_t* small_ = nullptr;
};

}  // namespace nf
