#pragma once
//! Validation against the float64 ground truth (docs/design.md §4).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/particles.h"
#include "methods/force_method.h"
#include "methods/registry.h"

namespace nf {

//! Accuracy of one kernel's accelerations against a reference.
struct Metrics {
  double rel_l2 = 0;    //!< ||a - ref|| / ||ref|| over all particles
  double max_rel = 0;   //!< max_i |a_i - ref_i| / max(|ref_i|, 1e-6 rms|ref|)
  double p99_rel = 0;   //!< the 99th percentile of the same per-particle relative error
  double momentum = 0;  //!< |sum m_i a_i| / sum |m_i a_i| of the kernel's own output
  bool finite = true;   //!< no NaN or inf anywhere in the output
};

//! Compares `a` with `ref` (dim values per particle); `masses` weight the momentum residual.
//! The per-particle denominator is floored at 1e-6 of the RMS reference magnitude so particles
//! whose forces cancel to rounding noise (lattice centres) do not dominate the maximum.
Metrics compare(const std::vector<double>& a, const std::vector<double>& ref, const std::vector<double>& masses, int dim);

//! compare() restricted to a sample: `a` is a kernel's whole output (dim per particle), `ref` the
//! reference at `targets` only (dim per target, in the order of `targets`). rel_l2, p99_rel and
//! max_rel are compare()'s on the targets (the floor of the per-particle error is 1e-6 of the
//! sample's RMS reference); momentum and finiteness are of the whole output, as in compare().
Metrics compare_sample(const std::vector<double>& a, const std::vector<double>& ref, const std::vector<double>& masses,
                       int dim, const std::vector<std::size_t>& targets);

//! The targets of a sampled validation: m distinct indices below n, increasing, drawn with
//! Floyd's algorithm from a stream of `seed` (core/random.h, the same on every platform; mixed
//! with a constant, so it is not the stream that generated the input). Every index when m >= n.
std::vector<std::size_t> sample_targets(std::size_t n, std::size_t m, std::uint64_t seed);

//! Relative L2 tolerance of the arithmetic: 1e-5 for float32 kernels, 1e-12 for float64.
double tolerance(Precision p);
//! The tolerance of kernel k with setup s: the arithmetic's, and for a full method (far field)
//! its accuracy target: --accuracy, else with --order the error model's error at that order, at
//! the setup's leaf level for `particles` (farfield::error_factor), times 3 (farfield/order.h),
//! else the default 1e-4.
double tolerance(const KernelInfo& k, const MethodSetup& s, int dim, std::uint64_t particles);
//! Finite, and within the tolerance (NaN never passes).
bool passes(const Metrics& m, double tolerance);

//! Ground truth for kernels of precision `p`: float64 arithmetic on the inputs those kernels
//! see (float32-rounded for float kernels): with Mask::near the near field at setup.level over
//! setup.domain with box membership from the original coordinates, with Mask::all every pair
//! (what a full method approximates). cpu-allpairs up to `cpu_limit` particles (or without a GPU),
//! else allpairs-tiled on the GPU. `name` receives a description of what was used.
std::vector<double> ground_truth(const Particles& p, const MethodSetup& setup, Precision kernel_precision,
                                 std::size_t cpu_limit, std::string& name, Mask mask = Mask::near);

//! ground_truth() at `targets` only (dim values per target, in their order): the same float64
//! sum on the same inputs and, with Mask::near, the same near field (cpu_allpairs_targets: each
//! value is cpu-allpairs' bit for bit), over every source, on the CPU whatever N (O(targets x N),
//! OpenMP over the targets). `name` receives a description naming the sample.
std::vector<double> sampled_ground_truth(const Particles& p, const MethodSetup& setup, Precision kernel_precision,
                                         const std::vector<std::size_t>& targets, std::string& name,
                                         Mask mask = Mask::near);

//! What validating one kernel against a reference found.
struct KernelCheck {
  Metrics metrics;
  bool repeat_checked = false;   //!< deterministic kernels: run twice and compared bit for bit
  bool repeatable = true;
  bool one_gpu_checked = false;  //!< spread runs that must equal one GPU bit for bit were compared with it
  bool one_gpu_equal = true;
  bool pass = false;             //!< within tolerance, finite, and repeatable where claimed
};

//! Runs method `m` of kernel k, prepared on p (output poisoned first), and compares its
//! accelerations with `reference`; a kernel claiming to be deterministic runs a second time and
//! must reproduce its output bit for bit. The accelerations go to `out` when given. With
//! `targets`, `reference` holds those particles only (sampled_ground_truth) and the metrics are
//! compare_sample's; the pass rule is the same.
KernelCheck check_method(ForceMethod& m, const KernelInfo& k, const Particles& p, const std::vector<double>& reference,
                         std::vector<double>* out = nullptr, const std::vector<std::size_t>* targets = nullptr);

//! make_method, prepare on p, check_method: one kernel on one device.
KernelCheck validate_kernel(const KernelInfo& k, const Particles& p, const MethodSetup& s,
                            const std::vector<double>& reference);

//! True when a and b hold the same doubles bit for bit.
bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b);

//! Masses as a kernel of precision p sees them (for the momentum residual).
std::vector<double> masses_as_seen(const Particles& p, Precision precision);

}  // namespace nf
