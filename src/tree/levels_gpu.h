#pragma once
//! The tree with levels on the GPU (docs/design.md §16): tree/levels.h's arrays for a DeviceTree,
//! built from its compact leaf level by one scan per level (a box at level l - 1 starts where the
//! key >> d of the level-l boxes changes). The leaf level is the tree's own arrays; the coarser
//! levels' buffers hold min(N, 2^(d l)) boxes, allocated once, so a rebuild (every simulation
//! step) runs kernels only. CUDA builds only.

#include <cstdint>
#include <vector>

#include "core/gpu_runtime.h"
#include "tree/tree_gpu.h"

namespace nf {

//! One level's non-empty boxes, in key order (device pointers; the leaf level's are the tree's).
struct DeviceLevel {
  std::uint32_t boxes = 0;
  const std::uint64_t* key = nullptr;  //!< boxes Morton keys at this level, ascending
  const std::uint32_t* first = nullptr;  //!< boxes + 1 offsets into the sorted particles
  const std::uint32_t* parent = nullptr; //!< boxes compact ids at level l - 1 (null at level 0)
  const std::uint32_t* child = nullptr;  //!< boxes + 1 offsets into level l + 1's boxes (null at the leaf)
  //! An adaptive tree's level (farfield/adaptive_gpu.h) keeps some boxes only, whose particles
  //! need not be contiguous: box b's particles end at last[b] (null: at first[b + 1]), and flags[b]
  //! holds tree/adaptive.h's flags (null: every box is a target, as on a uniform level).
  const std::uint32_t* last = nullptr;
  const std::uint8_t* flags = nullptr;
  //! An adaptive level's split boxes (compact ids, ascending) and their count (one device word):
  //! only their children are targets, so M2L's sibling groups are formed over them alone (null: a
  //! uniform level, every box's children are targets).
  const std::uint32_t* split = nullptr;
  const std::uint32_t* split_count = nullptr;
};

//! Every level 0..leaf of a DeviceTree, and the storage of the coarse ones.
class DeviceLevels {
 public:
  int dim = 2, leaf = 0;
  Domain domain;
  std::vector<DeviceLevel> level;  //!< level[l], l = 0..leaf

  //! Side of a box at level l.
  double side(int l) const { return domain.side / double(std::uint64_t(1) << l); }
  //! Builds the levels of t (the tree must outlive the use of the leaf level). Enqueued on the
  //! default stream; reads each level's box count back (one small copy per level).
  void build(const DeviceTree& t);

 private:
  struct Storage {
    gpu::DeviceBuffer<std::uint64_t> key;
    gpu::DeviceBuffer<std::uint32_t> first, parent, child;
  };
  std::vector<Storage> store_;  // per level
  gpu::DeviceBuffer<std::uint32_t> count_;
  gpu::Workspace temp_;
};

}  // namespace nf
