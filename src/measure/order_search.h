#pragma once
//! The measured order (docs/design.md §16, "The measured order"): a full method's order chosen by
//! measuring its error on the input itself, for `--order-sample M` (MethodSetup::order_sample).
//!
//! The error model of farfield/order.h has to hold for every input it was calibrated on, so it
//! carries the worst one's margin (a thin shell's, in 3D on adaptive trees) for all of them. Here
//! the method runs at trial orders on the particles it is made for, and each trial's accelerations
//! at M sampled targets are compared with float64 direct sums at those targets; the order taken is
//! the lowest of those tried whose error bound (the sampled relative L2 error with its square
//! raised by kOrderSearchZ standard errors: a heuristic bound, not a guarantee) is within the
//! accuracy. The walk starts at the table's own order for the accuracy (no margin, no depth or
//! sparse factor) and goes down one order at a time while the bound holds, or up until it does; it
//! stops early where an order is refused (memory) or the bound stops falling (two orders in a row
//! not below 0.9 of the least: rounding, not truncation, is left), and then takes the order of least
//! bound. Without particles or a far field (leaf level below 2) it measures nothing and takes the
//! table's order.

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
//! particles carry much of the sum, and a sample that misses them also understates the spread).
//! Measured on 3D inputs of N = 20000 (cpu-fmm in double against a naive float64 sum over every
//! pair; 400 samples each, the share of samples whose bound covered the true error), at z = 2 / 3:
//! Plummer p = 10: 97.5 / 97.8% with 250 targets, 89.7 / 93.0% with 1000, 97.5 / 99.8% with 4000;
//! clusters p = 10: 87.3 / 93.2%, 94.8 / 99.3%, 97.5 / 99.5%; clusters p = 8: 86.8 / 94.3%,
//! 94.5 / 98.5%, 97.5 / 99.5%; uniform p = 8: 93.8 / 97.3%, 99 / 100%, 99 / 100%. At 4000 of 20000
//! the finite-population factor narrows the bound by about 11%, which a sample of 4000 of 2^24 does
//! not have; the test "sampled_error on a full method's errors" holds z = 3 to 97% at 4000 and 90%
//! at 1000 targets.
inline constexpr double kOrderSearchZ = 3.0;

//! The seed of the search's targets: a stream of its own (sample_targets mixes it with another
//! constant), so that `validate --sample m` draws its targets apart from the M that chose the order:
//! the two samples share only what chance gives both (about M m / N targets).
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
  std::string stopped;  //!< why the walk stopped short (a refused order, a bound that stopped falling) or nothing was measured
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
