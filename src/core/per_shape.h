#pragma once
//! One entry point per shape of a computation: dimension (2, 3) x scalar type (float, double).
//! A kernel file exports its four instantiations as one such table, and the registry
//! (methods/registry.cc) picks the one a run needs.

#include <type_traits>

namespace nf {

//! Fn<float> for 2D and 3D, Fn<double> for 2D and 3D (null where a build lacks them).
template <template <class> class Fn>
struct PerShape {
  Fn<float> f2 = nullptr, f3 = nullptr;
  Fn<double> d2 = nullptr, d3 = nullptr;
  template <int D, class T>
  Fn<T> get() const {
    if constexpr (std::is_same_v<T, float>) return D == 2 ? f2 : f3;
    else return D == 2 ? d2 : d3;
  }
  bool empty() const { return !f2 && !f3 && !d2 && !d3; }
};

//! The four instantiations of a template fn<D, T> as a PerShape initializer (taking their
//! addresses instantiates them).
#define NF_PER_SHAPE(fn) {&fn<2, float>, &fn<3, float>, &fn<2, double>, &fn<3, double>}

}  // namespace nf
