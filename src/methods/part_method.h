#pragma once
//! A method made as one part of an evaluation spread over several devices (distributed/): a GPU
//! near-field method on the particles of one part, on the device current when it was made, whose
//! sorted arrays the distributing layer reads and writes directly (halo bodies in, counterforces
//! out) between evaluate() calls it enqueues. The setup's BoxScope says which boxes it computes.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "methods/force_method.h"

namespace nf {

struct DeviceTree;

//! See the top of this file. Every call needs the part's device current.
class PartMethod : public DeviceMethod {
 public:
  virtual void* device_bodies() = 0;  //!< Body<T>[n], sorted by box
  virtual void* device_acc() = 0;     //!< Acc4<T>[n], sorted by box
  virtual std::size_t body_bytes() const = 0;
  virtual std::size_t acc_bytes() const = 0;
  virtual bool double_precision() const = 0;
  //! The tree's box_first and box_key, downloaded (the layer checks them against its plan).
  virtual std::vector<std::uint32_t> tree_box_first() const = 0;
  virtual std::vector<std::uint64_t> tree_box_key() const = 0;
  //! Sorted position -> row of the part's input.
  virtual const std::vector<std::uint32_t>& sorted_order() = 0;
  //! Accelerations of the last evaluation in sorted order, dim values per particle (waits).
  virtual std::vector<double> sorted_accelerations() = 0;
  //! The tree of the last prepare (the bodies and accelerations are in its order): what a full
  //! method (gpu_fmm.cc) builds its far field on.
  virtual const DeviceTree& device_tree() const = 0;

 protected:
  using DeviceMethod::DeviceMethod;
};

}  // namespace nf
