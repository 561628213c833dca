#pragma once
//! The measured order (docs/design.md §16, "The measured order"): a full method's order chosen by
//! measuring its error on the input itself, for `--order-sample M` (MethodSetup::order_sample).
//!
//! The error model of farfield/order.h has to hold for every input it was calibrated on, so it
//! carries the worst one's margin (a thin shell's, in 3D on adaptive trees) for all of them. Here
//! the method runs at trial orders on the particles it is made for, and each trial's accelerations
//! at M sampled targets are compared with float64 direct sums at those targets; the order taken is
//! the lowest whose error bound (the sampled relative L2 error plus kOrderSearchZ standard errors)
//! is within the accuracy. The search starts at the table's own order for the accuracy (no margin,
//! no depth or sparse factor), goes down while the bound holds and up until it does.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/particles.h"
#include "methods/force_method.h"

namespace nf {

struct KernelInfo;

//! How many standard errors above the sampled error the bound lies. A normally distributed
//! estimate would need 2 for 97.7% one-sided; the errors of a full method are skewed (a few
//! particles carry much of the sum, and a sample that misses them also understates the spread), so
//! that 2 covered the true error in only 87% of 400 samples of 250 targets on 3D clusters (cpu-fmm,
//! p = 8, N = 20000), 3 in 94%, and at 1000 and 4000 targets 3 covered it in 94.5% to 100% of them
//! on Plummer, uniform and clusters (the test "sampled_error ... on a full method's errors").
inline constexpr double kOrderSearchZ = 3.0;

//! The seed of the search's targets: a stream of its own (validation/sample_targets mixes it with
//! another constant), so that `validate --sample` never checks a measured order on the targets
//! that chose it unless asked for this very seed.
inline constexpr std::uint64_t kOrderSearchSeed = 0x6f72646572ull;  // "order"

//! A sampled estimate of a relative L2 error and its upper bound.
struct SampledError {
  double rel_l2 = 0;  //!< sqrt(sum |a - ref|^2 / sum |ref|^2) over the sample
  double bound = 0;   //!< the same with the squared ratio raised by z standard errors
};

//! The relative L2 error of `a` against `ref` (dim values per target, `targets` targets each) as an
//! estimate of the error over all `population` particles, of which the targets are a uniform sample
//! without replacement, with its bound: the squared ratio R^2 = sum u / sum v (u = |a - ref|^2,
//! v = |ref|^2 per target) plus z times its standard error, the ratio estimator's
//! sqrt((1 - M / N) s^2 / M) / mean(v) with s^2 the sample variance of u - R^2 v (exact, bound =
//! estimate, when M = N; infinite for a single target out of more). Values are scaled by the
//! largest |ref| first (no overflow in the squares). A reference of zeros gives 0 where a is zero
//! too, else infinity. Non-finite values give NaN.
SampledError sampled_error(const double* a, const double* ref, std::size_t targets, int dim, std::size_t population,
                           double z = kOrderSearchZ);

//! The float64 accelerations at `targets` (dim values per target, in their order) over every source,
//! on the inputs a kernel of precision s.precision sees (float32-rounded for float kernels): on the
//! GPU (`gpu`: allpairs-2d in float64, the targets against every body as sources, partial sums over
//! source slices added in a fixed order) or on the CPU (validation.h's sampled_ground_truth, OpenMP
//! over the targets). The two agree to rounding; the GPU takes seconds less at large M N (4096
//! targets of 2^24 bodies: 31-36 s on 16 CPU cores). `name` says which ran.
std::vector<double> sampled_reference(const Particles& p, const MethodSetup& s, const std::vector<std::size_t>& targets,
                                      bool gpu, std::string& name);

//! One trial order of a search.
struct OrderTrial {
  int order = 0;
  SampledError error;
  bool pass = false;  //!< error.bound <= the accuracy
  double ms = 0;      //!< making, preparing and evaluating the method at this order, and comparing
};

//! What a search found (ForceMethod::order_search()).
struct OrderSearch {
  std::size_t sample = 0;  //!< targets compared (every particle when M >= N)
  double accuracy = 0;     //!< the target
  int order = 0;           //!< the order taken
  bool reached = false;    //!< false: no order's bound was within the accuracy; `order` has the least bound
  double reference_ms = 0; //!< the float64 sums at the targets
  std::string reference;   //!< where they ran (sampled_reference's name)
  double ms = 0;           //!< the whole search
  std::vector<OrderTrial> trials;  //!< in the order they ran
  //! One line: the order, its error and bound, each order tried with its error and bound, the time.
  std::string describe(const std::string& kernel) const;
};

//! Searches the order of full method k for setup `s` (order 0, order_sample M >= 1; the accuracy
//! 0 means farfield::kDefaultAccuracy) on particles `p`; the float64 sums run on the GPU for a GPU
//! kernel, on the CPU otherwise (sampled_reference). Each trial is make_method at that order
//! (its setup otherwise s's), prepare(p), evaluate(); a trial whose output is not finite throws as
//! check_finite_accelerations does.
OrderSearch search_order(const KernelInfo& k, const MethodSetup& s, const Particles& p);

//! Kernel k's method for `s` on particles like `like`: where k is a full method and s asks for a
//! measured order (order_sample > 0, order 0), search_order on `like`'s positions, then make_method
//! at the order found with the accuracy it was found for (validate holds the method to that target),
//! the search kept in its order_search(); otherwise make_method.
std::unique_ptr<ForceMethod> make_measured_method(const KernelInfo& k, const MethodSetup& s, const Particles& like);

}  // namespace nf
