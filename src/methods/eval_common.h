#pragma once
// Helpers shared by the kernel families' Evaluation classes (eval_cpu.cc, eval_gpu.cc).
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/body.h"
#include "core/particles.h"
#include "methods/evaluation.h"
#include "tree/tree.h"

namespace nf::detail {

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

//! Sorted-order T accelerations back to input-order float64 values.
template <int D, class T>
std::vector<double> scatter(const std::vector<Acc4<T>>& sorted, const std::vector<std::uint32_t>& order) {
  std::vector<double> out(sorted.size() * D);
  for (std::size_t s = 0; s < sorted.size(); ++s) {
    double* o = &out[std::size_t(order[s]) * D];
    o[0] = sorted[s].x;
    o[1] = sorted[s].y;
    if constexpr (D == 3) o[2] = sorted[s].z;
  }
  return out;
}

//! T accelerations as float64 values, dim per particle, in the same order.
template <int D, class T>
std::vector<double> widen(const std::vector<Acc4<T>>& a) {
  std::vector<double> out(a.size() * D);
  for (std::size_t i = 0; i < a.size(); ++i) {
    out[i * D] = a[i].x;
    out[i * D + 1] = a[i].y;
    if constexpr (D == 3) out[i * D + 2] = a[i].z;
  }
  return out;
}

//! eps^2 rounded to the kernel's scalar type.
template <class T>
T softening_squared(double eps) {
  return static_cast<T>(eps * eps);
}

//! Instantiates E<D, T> for the particles' dimension and the setup's precision, as a Base.
template <class Base, template <int, class> class E, class... Args>
std::unique_ptr<Base> make_shaped_as(int dim, Precision p, Args&&... args) {
  if (dim == 2) {
    if (p == Precision::f32) return std::make_unique<E<2, float>>(std::forward<Args>(args)...);
    return std::make_unique<E<2, double>>(std::forward<Args>(args)...);
  }
  if (p == Precision::f32) return std::make_unique<E<3, float>>(std::forward<Args>(args)...);
  return std::make_unique<E<3, double>>(std::forward<Args>(args)...);
}

//! make_shaped_as for evaluations.
template <template <int, class> class E, class... Args>
std::unique_ptr<Evaluation> make_shaped(int dim, Precision p, Args&&... args) {
  return make_shaped_as<Evaluation, E>(dim, p, std::forward<Args>(args)...);
}

}  // namespace nf::detail
