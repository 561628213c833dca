#pragma once
// The half near field cut into work items of bounded size, built on the GPU from the tree: the
// plan of the Newton-3 warp kernels (n3_*.cu). An item is a target range and a source range of
// the sorted particles, each at most `chunk` long: a box against itself (each pair once, the
// chunks of a big box pairwise) or a box against a non-empty neighbor of its half list. Every
// pair of the near field belongs to exactly one item, so the time of a launch follows the pair
// count and not the largest box: a box of 100k particles becomes thousands of items.
#include <cstdint>

#include "common/gpu_runtime.h"

namespace nf {

//! Targets [a_begin, a_end) against sources [b_begin, b_end); a_begin == b_begin marks a chunk
//! against itself (pairs i < j only).
struct PairItem {
  std::uint32_t a_begin, a_end, b_begin, b_end;
};

//! Items of one tree, rebuilt by `build` (allocates only when a tree needs more than before).
class PairItemList {
 public:
  //! box_start: boxIdx (dense); nonempty: the M non-empty boxes; half_offset/half_ids: half lists.
  //! Items are ordered by target box (Z-order), own box first, then neighbors in list order.
  void build(const std::uint32_t* box_start, const std::uint32_t* nonempty, std::uint32_t nonempty_count,
             const std::uint32_t* half_offset, const std::uint32_t* half_ids, std::uint32_t chunk);
  const PairItem* items() const { return items_.data(); }
  std::uint32_t size() const { return size_; }

 private:
  gpu::DeviceBuffer<std::uint32_t> offsets_;  // M + 1: first item of each non-empty box
  gpu::DeviceBuffer<PairItem> items_;
  gpu::DeviceBuffer<unsigned char> temp_;
  std::uint32_t size_ = 0;
};

}  // namespace nf
