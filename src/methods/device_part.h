#pragma once
//! One GPU's share of a multi-GPU evaluation (distributed/multi_gpu.h), as the GPU near-field
//! family (eval_gpu.cc) offers it: any registered GPU near-field kernel, prepared through its
//! registry factory on the particles of one part, on the device current at preparation. The
//! multi-GPU driver reads and writes the part's sorted arrays directly (halo bodies in,
//! counterforces out) and enqueues evaluations without waiting for them.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nf {

//! Set in ForceSetup::placement by the multi-GPU driver: what a part must take from the whole
//! input so that its kernel runs exactly as it would on one GPU.
struct DevicePlacement {
  double max_mass = 0;                //!< the whole input's: every part takes the same guarded/unguarded path
  std::uint32_t max_box_count = 0;    //!< the whole input's largest box: the same launch shapes as on one GPU
  std::uint32_t target_boxes = ~0u;   //!< only the first target_boxes boxes are computed (CrossPairs::once)
};

//! A prepared GPU near-field evaluation seen from the multi-GPU driver. Every call needs the
//! part's device current.
class DevicePart {
 public:
  virtual ~DevicePart() = default;
  //! Enqueues one evaluation on the device's default stream and returns at once.
  virtual void launch_async() = 0;
  virtual void* device_bodies() = 0;  //!< Body<T>[n], sorted by box
  virtual void* device_acc() = 0;     //!< Acc4<T>[n], sorted by box
  virtual std::size_t body_bytes() const = 0;
  virtual std::size_t acc_bytes() const = 0;
  virtual bool double_precision() const = 0;
  //! The tree's box_first and box_key, downloaded (the driver checks them against its plan).
  virtual std::vector<std::uint32_t> tree_box_first() const = 0;
  virtual std::vector<std::uint64_t> tree_box_key() const = 0;
  //! Sorted position -> row of the part's input.
  virtual const std::vector<std::uint32_t>& sorted_order() const = 0;
  //! Accelerations of the last evaluation in sorted order, dim values per particle.
  virtual std::vector<double> sorted_accelerations() = 0;
};

}  // namespace nf
