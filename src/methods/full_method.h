#pragma once
//! What the full methods (cpu_fmm.cc, gpu_fmm.cc) share about their setups (docs/design.md §16).

#include "farfield/order.h"
#include "methods/force_method.h"

namespace nf {

//! A full method's setup as it runs: the order given, or chosen from the accuracy (which is then
//! kept as the validation target: farfield::resolve).
inline MethodSetup full_setup(MethodSetup s, int dim) {
  farfield::resolve(dim, s.order, s.accuracy);
  return s;
}

//! The setup of a full method's near-field part: the same, less the far field's options.
inline MethodSetup near_part_setup(MethodSetup s) {
  s.order = 0, s.accuracy = 0, s.near.clear();
  return s;
}

}  // namespace nf
