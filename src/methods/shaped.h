#pragma once
//! The one place where a run's dimension and precision pick a method class's instantiation.

#include <memory>
#include <string>
#include <utility>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/particles.h"

namespace nf {

//! std::make_unique<M<D, T>>(args...) as a Base, for D = dim (2 or 3) and T = float or double.
template <class Base, template <int, class> class M, class... Args>
std::unique_ptr<Base> make_shaped(int dim, Precision precision, Args&&... args) {
  const bool f32 = precision == Precision::f32;
  if (dim == 2) {
    if (f32) return std::make_unique<M<2, float>>(std::forward<Args>(args)...);
    return std::make_unique<M<2, double>>(std::forward<Args>(args)...);
  }
  if (f32) return std::make_unique<M<3, float>>(std::forward<Args>(args)...);
  return std::make_unique<M<3, double>>(std::forward<Args>(args)...);
}

//! make_shaped for a GPU family's method class; in a CPU-only build (where the class is only
//! declared) a UsageError naming the kernel and the reason.
template <class Base, template <int, class> class M, class... Args>
std::unique_ptr<Base> make_on_device(const std::string& kernel, int dim, Precision precision, Args&&... args) {
#if defined(NF_HAVE_CUDA)
  (void)kernel;
  return make_shaped<Base, M>(dim, precision, std::forward<Args>(args)...);
#else
  (void)dim, (void)precision, ((void)args, ...);
  throw UsageError("kernel " + kernel + " needs a CUDA GPU: " + gpu::unavailable_reason());
#endif
}

}  // namespace nf
