#pragma once
//! A CPU method made as one part of an evaluation spread over several processes (distributed/,
//! docs/design.md §15): a CPU near-field method on the particles of one part, whose sorted arrays
//! the distributing layer reads and writes directly (halo bodies in, counterforces out) around
//! evaluate(). The setup's BoxScope says which boxes it computes. The CPU twin of PartMethod.

#include <cstddef>

#include "methods/force_method.h"
#include "tree/tree.h"

namespace nf {

//! See the top of this file.
class HostPartMethod : public HostMethod {
 public:
  virtual unsigned char* sorted_bodies() = 0;  //!< Body<T>[n], sorted by box (the tree's order)
  virtual unsigned char* sorted_acc() = 0;     //!< Acc4<T>[n], sorted by box
  virtual std::size_t body_bytes() const = 0;
  virtual std::size_t acc_bytes() const = 0;
  virtual bool double_precision() const = 0;
  //! The tree of the last prepare: box keys and offsets (checked against the plan), the order.
  virtual const Tree& tree() const = 0;

 protected:
  using HostMethod::HostMethod;
};

}  // namespace nf
