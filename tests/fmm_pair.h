#pragma once
// `fmm` and its CPU twin `cpu-fmm` on one input, both evaluated, for the GPU tests that compare
// them to rounding (test_gpu_fmm.cc, test_gpu_fmm_p2m.cc), and the relative L2 distance they are
// held to.
#include <cmath>
#include <memory>
#include <vector>

#include "core/particles.h"
#include "methods/force_method.h"
#include "methods/registry.h"

namespace nf::test {

//! Relative L2 distance of a from b (absolute where b is all zeros).
inline double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct FmmPair {
  std::unique_ptr<ForceMethod> cpu, gpu;
};

//! fmm with setup s and cpu-fmm with the same setup, its near field summed with cpu-omp's scalar
//! arithmetic (in float the default near kernel, cpu-simd-omp-n3, differs from it by up to 1.1e-6
//! on the tests' inputs, half their bound), both prepared on p and evaluated, the GPU's output
//! poisoned first (every stage must write it).
inline FmmPair evaluate_fmm_and_cpu(const MethodSetup& s, const Particles& p) {
  MethodSetup cs = s;
  cs.near = "cpu-omp";
  FmmPair r{make_method(find_kernel("cpu-fmm"), cs, p), make_method(find_kernel("fmm"), s, p)};
  r.cpu->prepare(p);
  r.cpu->evaluate();
  r.gpu->prepare(p);
  r.gpu->poison_output();
  r.gpu->evaluate();
  return r;
}

}  // namespace nf::test
