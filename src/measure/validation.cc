#include "measure/validation.h"

#include <cmath>
#include <cstring>

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "allpairs/allpairs_cpu.h"
#include "core/bodies.h"
#include "core/gpu_runtime.h"
#include "core/random.h"
#include "farfield/order.h"
#include "tree/domain.h"

namespace nf {

namespace {

// The largest finite magnitude in `v` (1 where there is none): the metrics' sums run on values
// divided by it, so that accelerations or masses near float64's limits neither overflow nor
// underflow when squared or multiplied (1e-170 squared is 0, 1e160 squared infinite); the ratios
// they report do not change.
double scale_of(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v)
    if (std::isfinite(x)) s = std::max(s, std::fabs(x));
  return s > 0 ? s : 1.0;
}

// |sum m_i a_i| / sum m_i |a_i| of a kernel's output; NaN-free only when the output is.
double momentum_residual(const std::vector<double>& a, const std::vector<double>& masses, int dim) {
  const double sa = scale_of(a), sm = scale_of(masses);
  double p[3] = {0, 0, 0}, pabs = 0;
  for (std::size_t i = 0; i < masses.size(); ++i) {
    double a2 = 0;
    const double mi = masses[i] / sm;
    for (int d = 0; d < dim; ++d) {
      const double ai = a[i * dim + d] / sa;
      a2 += ai * ai;
      p[d] += mi * ai;
    }
    pabs += mi * std::sqrt(a2);
  }
  const double pn = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
  return pabs > 0 ? pn / pabs : 0.0;
}

}  // namespace

Metrics compare(const std::vector<double>& a, const std::vector<double>& ref, const std::vector<double>& masses, int dim) {
  Metrics m;
  const std::size_t n = masses.size();
  double err2 = 0, ref2 = 0;
  const double scale = std::max(scale_of(a), scale_of(ref));  // see scale_of
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!std::isfinite(a[k])) m.finite = false;
    const double ak = a[k] / scale, rk = ref[k] / scale;
    err2 += (ak - rk) * (ak - rk);
    ref2 += rk * rk;
  }
  m.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
  const double floor = n ? 1e-6 * std::sqrt(ref2 / static_cast<double>(n)) : 0.0;
  std::vector<double> rel(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double e2 = 0, r2 = 0;
    for (int d = 0; d < dim; ++d) {
      const double ai = a[i * dim + d] / scale, ri = ref[i * dim + d] / scale;
      e2 += (ai - ri) * (ai - ri);
      r2 += ri * ri;
    }
    const double denom = std::max(std::sqrt(r2), floor);
    rel[i] = denom > 0 ? std::sqrt(e2) / denom : e2 > 0 ? INFINITY : 0.0;
    m.max_rel = std::max(m.max_rel, rel[i]);
  }
  if (n > 0) {
    const std::size_t k = std::min(n - 1, static_cast<std::size_t>(std::ceil(0.99 * double(n))) - 1);
    std::nth_element(rel.begin(), rel.begin() + k, rel.end());
    m.p99_rel = rel[k];
  }
  m.momentum = momentum_residual(a, masses, dim);
  if (!m.finite) m.rel_l2 = m.max_rel = m.p99_rel = m.momentum = NAN;
  return m;
}

Metrics compare_sample(const std::vector<double>& a, const std::vector<double>& ref, const std::vector<double>& masses,
                       int dim, const std::vector<std::size_t>& targets) {
  std::vector<double> at(targets.size() * dim), mt(targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t) {
    for (int d = 0; d < dim; ++d) at[t * dim + d] = a[targets[t] * dim + d];
    mt[t] = masses[targets[t]];
  }
  Metrics m = compare(at, ref, mt, dim);
  // The whole output is at hand: a particle the kernel skipped (left NaN by poison_output) fails
  // the check even when the sample misses it, and the momentum stays the output's own.
  m.finite = std::all_of(a.begin(), a.end(), [](double v) { return std::isfinite(v); });
  m.momentum = momentum_residual(a, masses, dim);
  if (!m.finite) m.rel_l2 = m.max_rel = m.p99_rel = m.momentum = NAN;
  return m;
}

std::vector<std::size_t> sample_targets(std::size_t n, std::size_t m, std::uint64_t seed) {
  std::vector<std::size_t> out;
  if (m >= n) {
    out.resize(n);
    std::iota(out.begin(), out.end(), std::size_t(0));
    return out;
  }
  // Floyd: for j = n - m .. n - 1 draw t in [0, j]; take t, or j when t is taken already. Every
  // m-subset is equally likely, with m draws and O(m) memory (N = 2^24 needs no N-sized array).
  Random r(seed ^ 0x73616d706c65ull);  // "sample": a stream apart from the generator's
  std::unordered_set<std::size_t> taken;
  taken.reserve(2 * m);
  out.reserve(m);
  for (std::size_t j = n - m; j < n; ++j) {
    std::size_t t = static_cast<std::size_t>(r.below(j + 1));
    if (!taken.insert(t).second) {
      t = j;
      taken.insert(j);
    }
    out.push_back(t);
  }
  std::sort(out.begin(), out.end());  // memory order for the reference's loads
  return out;
}

double tolerance(Precision p) { return p == Precision::f32 ? 1e-5 : 1e-12; }

double tolerance(const KernelInfo& k, const MethodSetup& s, int dim, std::uint64_t particles) {
  const double arithmetic = tolerance(s.precision);
  if (!k.far_field()) return arithmetic;
  // An adaptive method's explicit order is held to the table alone (its margin is for --accuracy).
  const double factor = k.adaptive() ? 1.0 : farfield::error_factor(dim, s.level, double(particles));
  const double target = s.accuracy > 0 ? s.accuracy
                        : s.order > 0  ? 3.0 * farfield::error_model(dim).error(s.order) * factor
                                       : farfield::kDefaultAccuracy;
  return std::max(arithmetic, target);
}

bool passes(const Metrics& m, double tolerance) { return m.finite && m.rel_l2 <= tolerance; }

std::vector<double> masses_as_seen(const Particles& p, Precision precision) {
  std::vector<double> m = p.m;
  if (precision == Precision::f32)
    for (double& v : m) v = static_cast<float>(v);
  return m;
}

std::vector<double> ground_truth(const Particles& p, const MethodSetup& setup, Precision kernel_precision,
                                 std::size_t cpu_limit, std::string& name, Mask mask) {
  MethodSetup ref = setup;
  ref.mask = mask;
  ref.order = 0, ref.accuracy = 0, ref.near.clear(), ref.leaf_size = 0, ref.order_sample = 0;
  ref.count_interactions = false;
  ref.precision = Precision::f64;
  ref.round_inputs_to_float = kernel_precision == Precision::f32;
  ref.scope = BoxScope{};
  const bool on_gpu = p.size() > cpu_limit && gpu::available();
  const KernelInfo& k = find_kernel(on_gpu ? "allpairs-tiled" : "cpu-allpairs");
  name = k.name + " --mask " + to_string(mask) + ", float64" +
         std::string(ref.round_inputs_to_float ? " on float32-rounded inputs" : "");
  auto m = make_method(k, ref, p);
  m->prepare(p);
  m->evaluate();
  return m->accelerations();
}

std::vector<double> sampled_ground_truth(const Particles& p, const MethodSetup& setup, Precision kernel_precision,
                                         const std::vector<std::size_t>& targets, std::string& name, Mask mask) {
  // What ground_truth's cpu-allpairs method does in prepare and compute, at the targets only.
  const bool rounded = kernel_precision == Precision::f32;
  const std::vector<Body<double>> bodies = bodies_as_seen(p, rounded ? Precision::f32 : Precision::f64);
  std::vector<Cell> cells;
  if (mask == Mask::near)
    cells = cells_from_positions(p, setup.level, setup.domain ? *setup.domain : default_domain(p));
  std::vector<double> acc(targets.size() * p.dim, 0.0);
  cpu_allpairs_targets(p.dim, bodies, mask == Mask::near ? &cells : nullptr, setup.softening, targets, acc.data());
  name = std::string("cpu-allpairs --mask ") + to_string(mask) + ", float64" +
         (rounded ? " on float32-rounded inputs" : "") + ", at " + std::to_string(targets.size()) + " sampled targets";
  return acc;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

KernelCheck check_method(ForceMethod& m, const KernelInfo& k, const Particles& p, const std::vector<double>& reference,
                         std::vector<double>* out, const std::vector<std::size_t>* targets) {
  m.poison_output();
  m.evaluate();
  const std::vector<double> a = m.accelerations();
  KernelCheck c;
  const std::vector<double> masses = masses_as_seen(p, m.setup().precision);
  c.metrics = targets ? compare_sample(a, reference, masses, p.dim, *targets) : compare(a, reference, masses, p.dim);
  if (k.deterministic()) {
    m.poison_output();
    m.evaluate();
    c.repeat_checked = true;
    c.repeatable = bitwise_equal(a, m.accelerations());
  }
  c.pass = passes(c.metrics, tolerance(k, m.setup(), p.dim, p.size())) && c.repeatable;
  if (out) *out = a;
  return c;
}

KernelCheck validate_kernel(const KernelInfo& k, const Particles& p, const MethodSetup& s,
                            const std::vector<double>& reference) {
  auto m = make_method(k, s, p);
  m->prepare(p);
  return check_method(*m, k, p, reference);
}

}  // namespace nf
