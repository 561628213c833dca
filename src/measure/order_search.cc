#include "measure/order_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/bodies.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "core/timing.h"
#include "farfield/multi_index.h"
#include "farfield/order.h"
#include "measure/validation.h"
#include "methods/registry.h"
#if defined(NF_HAVE_CUDA)
#include "allpairs/allpairs_gpu.h"
#endif

namespace nf {

#if defined(NF_HAVE_CUDA)
extern const GpuAllPairsKernels allpairs_2d_kernels;  // allpairs/allpairs_2d.cu

namespace {

// The targets' bodies against every body as a source, allpairs-2d in float64 (a body's own entry
// among the sources is at zero distance and adds exactly 0, as the CPU's skipped pair does).
template <int D>
std::vector<double> gpu_sums(const std::vector<Body<double>>& bodies, const std::vector<std::size_t>& targets,
                             double softening) {
  std::vector<Body<double>> at(targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t) at[t] = bodies[targets[t]];
  gpu::DeviceBuffer<Body<double>> target_bodies(at), sources(bodies);
  gpu::DeviceBuffer<Acc4<double>> acc(at.size());
  acc.fill(0);
  gpu::Workspace workspace;
  AllPairsView<double> v;
  v.bodies = target_bodies.data();
  v.n = static_cast<std::uint32_t>(at.size());
  v.sources = sources.data();
  v.source_count = static_cast<std::uint32_t>(bodies.size());
  v.acc = acc.data();
  v.eps2 = softening * softening;
  v.guarded = true;
  v.workspace = &workspace;
  allpairs_2d_kernels.get<D, double>()(v);
  return acceleration_rows<D>(acc.download());
}

}  // namespace
#endif

std::vector<double> sampled_reference(const Particles& p, const MethodSetup& s, const std::vector<std::size_t>& targets,
                                      bool gpu, std::string& name) {
  if (!gpu) return sampled_ground_truth(p, s, s.precision, targets, name, Mask::all);
#if defined(NF_HAVE_CUDA)
  gpu::require("the measured order's float64 sums on the GPU");
  const bool rounded = s.precision == Precision::f32;
  const std::vector<Body<double>> bodies = bodies_as_seen(p, rounded ? Precision::f32 : Precision::f64);
  name = std::string("allpairs-2d on the GPU, float64") + (rounded ? " on float32-rounded inputs" : "") + ", at " +
         std::to_string(targets.size()) + " sampled targets";
  return p.dim == 2 ? gpu_sums<2>(bodies, targets, s.softening) : gpu_sums<3>(bodies, targets, s.softening);
#else
  throw UsageError("the measured order's float64 sums on the GPU need a CUDA build");
#endif
}

SampledError sampled_error(const double* a, const double* ref, std::size_t targets, int dim, std::size_t population,
                           double z) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::size_t values = targets * std::size_t(dim);
  double scale = 0;
  for (std::size_t i = 0; i < values; ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(ref[i])) return {nan, nan};
    scale = std::max(scale, std::fabs(ref[i]));
  }
  if (targets == 0) return {0, 0};
  if (scale == 0) scale = 1;
  std::vector<double> u(targets), v(targets);
  double su = 0, sv = 0;
  for (std::size_t t = 0; t < targets; ++t) {
    double e2 = 0, r2 = 0;
    for (int d = 0; d < dim; ++d) {
      const double r = ref[t * dim + d] / scale, e = a[t * dim + d] / scale - r;
      e2 += e * e, r2 += r * r;
    }
    u[t] = e2, v[t] = r2, su += e2, sv += r2;
  }
  if (sv == 0) return su == 0 ? SampledError{0, 0} : SampledError{inf, inf};
  const double r2 = su / sv, m = double(targets);
  const double estimate = std::sqrt(r2);
  if (targets >= population) return {estimate, estimate};  // every particle: nothing is estimated
  if (targets < 2) return {estimate, inf};                 // one target: no spread to go by
  double s2 = 0;
  for (std::size_t t = 0; t < targets; ++t) {
    const double d = u[t] - r2 * v[t];
    s2 += d * d;
  }
  s2 /= m - 1;
  const double fpc = 1.0 - m / double(population);
  const double se = std::sqrt(fpc * s2 / m) / (sv / m);
  return {estimate, std::sqrt(r2 + z * se)};
}

namespace {

std::string e2(double v) { return format_number("%.2e", v); }

std::string seconds(double ms) { return format_number("%.3g s", ms / 1e3); }

}  // namespace

std::string OrderSearch::describe(const std::string& kernel) const {
  if (trials.empty()) return kernel + ": order " + std::to_string(order) + " (the table's for " + e2(accuracy) + "; " +
                             stopped + ": nothing measured)";
  const OrderTrial* chosen = nullptr;
  for (const OrderTrial& t : trials)
    if (t.order == order) chosen = &t;
  std::string s = kernel + ": order " + std::to_string(order) + " (measured at " + std::to_string(sample) +
                  " sampled targets: relative L2 " + (chosen ? e2(chosen->error.rel_l2) : "?") + ", bound " +
                  (chosen ? e2(chosen->error.bound) : "?") + (reached ? " <= " : " > ") + e2(accuracy) + "; tried";
  for (std::size_t i = 0; i < trials.size(); ++i)
    s += (i ? ", " : " ") + std::to_string(trials[i].order) + " (" + e2(trials[i].error.rel_l2) + ", bound " +
         e2(trials[i].error.bound) + (trials[i].pass ? ", pass)" : ", fail)");
  s += "; " + seconds(ms) + ", of which the reference " + seconds(reference_ms) + ": " + reference + ")";
  if (!stopped.empty()) s += "; " + stopped;
  if (!reached)
    s += "; no order's bound reached the accuracy on this input: the order of least bound runs (validate may fail it)";
  return s;
}

std::unique_ptr<ForceMethod> make_measured_method(const KernelInfo& k, const MethodSetup& s, const Particles& like) {
  if (!k.far_field() || s.order_sample == 0) return make_method(k, s, like);
  check_setup(k, s, like);  // the refusals (--order-sample with --order) before the float64 sums
  auto search = std::make_shared<OrderSearch>(search_order(k, s, like));
  MethodSetup chosen = s;
  chosen.order = search->order;
  chosen.accuracy = search->accuracy;
  chosen.order_sample = 0;  // a method at that order; order_search() says how it was found
  auto m = make_method(k, chosen, like);
  m->set_order_search(std::move(search));
  return m;
}

OrderSearch search_order(const KernelInfo& k, const MethodSetup& s, const Particles& p) {
  if (s.order_sample == 0) throw std::logic_error("search_order: no targets to measure on (order_sample 0)");
  const Stopwatch whole;
  OrderSearch out;
  out.accuracy = s.accuracy > 0 ? s.accuracy : farfield::kDefaultAccuracy;
  // The table's own order for the accuracy (farfield/order.h, no factor): where a typical
  // calibrated input reaches it. Nothing to measure without particles or a far field (a leaf level
  // below 2): that order, no trial.
  const int start = farfield::order_for_accuracy(p.dim, out.accuracy, 0, 0);
  if (p.size() == 0 || s.level < 2) {
    out.order = start, out.reached = true;
    out.stopped = p.size() == 0 ? "no particles" : "no far field at leaf level " + std::to_string(s.level);
    out.ms = whole.ms();
    return out;
  }
  const std::vector<std::size_t> targets = sample_targets(p.size(), s.order_sample, kOrderSearchSeed);
  out.sample = targets.size();
  Stopwatch clock;
  const std::vector<double> ref = sampled_reference(p, s, targets, k.gpu() && gpu::available(), out.reference);
  out.reference_ms = clock.ms();

  const int dim = p.dim;
  std::vector<double> at(targets.size() * std::size_t(dim));
  auto trial = [&](int order) {
    clock.restart();
    MethodSetup t = s;
    t.order = order;
    t.accuracy = out.accuracy;
    t.order_sample = 0;  // a plain method at this order
    auto m = make_method(k, t, p);
    m->prepare(p);
    m->evaluate();
    const std::vector<double> a = m->accelerations();
    check_finite_accelerations(a, p, s.precision);
    for (std::size_t i = 0; i < targets.size(); ++i)
      for (int d = 0; d < dim; ++d) at[i * dim + d] = a[targets[i] * dim + d];
    OrderTrial r;
    r.order = order;
    r.error = sampled_error(at.data(), ref.data(), targets.size(), dim, p.size());
    r.pass = r.error.bound <= out.accuracy;
    r.ms = clock.ms();
    out.trials.push_back(r);
    return r.pass;
  };

  // A trial the method refuses (memory, say) after the first ends the walk in its direction; the
  // first one's refusal is the caller's, as for an order given.
  auto tried = [&](int order, bool& refused) {
    try {
      return trial(order);
    } catch (const UsageError& e) {
      refused = true;
      out.stopped = "order " + std::to_string(order) + " refused: " + e.what();
      return false;
    }
  };
  int order = start;
  bool refused = false;
  if (trial(order)) {
    while (order > 1 && tried(order - 1, refused)) --order;
    out.order = order, out.reached = true;
  } else {
    // Up until an order passes; a bound that stops falling (two orders in a row not below 0.9 of
    // the least so far: the arithmetic's rounding, not the truncation, is left) ends the climb.
    double least = out.trials.back().error.bound;
    int stale = 0;
    while (order < farfield::kMaxOrder) {
      const bool pass = tried(order + 1, refused);
      if (refused) break;
      ++order;
      if (pass) break;
      const double bound = out.trials.back().error.bound;
      if (bound < 0.9 * least) {
        least = bound, stale = 0;
      } else if (++stale == 2) {
        out.stopped = "the bound stopped falling at order " + std::to_string(order);
        break;
      }
    }
    const OrderTrial& last = out.trials.back();
    out.reached = last.pass;
    if (out.reached) {
      out.order = last.order;
    } else {  // none passed: the least bound (the lowest such order)
      const auto best = std::min_element(out.trials.begin(), out.trials.end(), [](const OrderTrial& x, const OrderTrial& y) {
        return x.error.bound < y.error.bound;
      });
      out.order = best->order;
    }
  }
  out.ms = whole.ms();
  return out;
}

}  // namespace nf
