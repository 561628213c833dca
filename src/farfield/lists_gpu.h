#pragma once
//! The far field's interaction (M2L) lists on the GPU: farfield/lists.h's lists for DeviceLevels,
//! the same sets (ids ascending within a parent neighbor, parent neighbors in key-offset order).
//! A warp per box finds its parent's neighbors (a lane each) by binary search of their keys among
//! the coarser level's keys, and takes their children that are not its own neighbors: counted,
//! scanned into offsets, then filled. CUDA builds only.

#include <cstdint>
#include <vector>

#include "core/gpu_runtime.h"
#include "tree/levels_gpu.h"

namespace nf::farfield {

//! One level's lists in CSR form (device pointers into DeviceLists' storage).
struct DeviceList {
  const std::uint32_t* offset = nullptr;  //!< boxes + 1
  const std::uint32_t* ids = nullptr;     //!< links compact ids at the same level
  std::uint32_t links = 0;
};

//! The lists of every level (empty below level 2), with their storage reused between builds.
class DeviceLists {
 public:
  std::vector<DeviceList> level;
  //! Total entries over all levels (M2L translations per evaluation).
  std::uint64_t links() const;
  //! Builds the lists of t's levels (reads every level's total back in one small copy).
  void build(const DeviceLevels& t);

 private:
  struct Storage {
    gpu::DeviceBuffer<std::uint32_t> offset, ids;
  };
  std::vector<Storage> store_;
  gpu::DeviceBuffer<unsigned long long> totals_;  // per level: its entries, summed in 64 bits
  gpu::Workspace temp_;
};

}  // namespace nf::farfield
