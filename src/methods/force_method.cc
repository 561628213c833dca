#include "methods/force_method.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/numbers.h"
#include "farfield/order.h"
#include "methods/full_method.h"
#include "methods/potential.h"
#include "methods/registry.h"
#include "tree/tree.h"

namespace nf {

const char* to_string(Mask m) { return m == Mask::all ? "all" : "near"; }

Mask parse_mask(const std::string& text) {
  if (text == "all") return Mask::all;
  if (text == "near") return Mask::near;
  throw UsageError("unknown mask '" + text + "' (expected all or near)");
}

const char* to_string(ForceModel m) {
  switch (m) {
    case ForceModel::all_pairs: return "all-pairs";
    case ForceModel::subsampled: return "subsampled";
    case ForceModel::near_field: return "near-field";
    case ForceModel::fmm: return "fmm";
  }
  return "?";
}

double StageTimes::get(const std::string& name) const {
  for (const std::vector<Stage>* list : {&prepare, &evaluate})
    for (const Stage& s : *list)
      if (s.name == name) return s.ms;
  return 0.0;
}

void ForceMethod::prepare(const DeviceParticles&, std::uint64_t) {
  throw std::logic_error("a host method was given device particles");
}

bool ForceMethod::prepare_in_place(DeviceParticles& p, DeviceVectors&, gpu::DeviceBuffer<std::uint32_t>&,
                                   std::uint64_t step) {
  prepare(p, step);
  return false;
}

void ForceMethod::accelerations(DeviceVectors&) { throw std::logic_error("a host method was asked for device output"); }

double ForceMethod::device_potential() { throw std::logic_error("a host method has no device potential"); }

std::string ForceMethod::device_potential_method() const { return "CPU, float64"; }

std::string ForceMethod::describe() const {
  switch (model_) {
    case ForceModel::all_pairs:
      return "all pairs: the exact softened dynamics";
    case ForceModel::subsampled: {
      const std::string k = std::to_string(setup_.subsample);
      return "all pairs sub-sampled: every " + k + "th source per step (offset = step mod " + k + "), masses times " +
             k + "; an approximation of the exact softened dynamics";
    }
    case ForceModel::near_field:
      return "near field only: forces from the particles in the same and adjacent boxes at level " +
             std::to_string(setup_.level) +
             (setup_.domain ? std::string(" (boxes over the given domain)")
                            : std::string(" (boxes over each step's bounding square/cube)")) +
             "; NOT the full softened dynamics";
    case ForceModel::fmm:  // an adaptive method's setup carries its leaf size (never 0 there)
      return "every pair: the near field " +
             (setup_.leaf_size ? "of each adaptive leaf (leaf size " + std::to_string(setup_.leaf_size) +
                                     ", leaves down to level " + std::to_string(setup_.level) + ")"
                               : "at level " + std::to_string(setup_.level)) +
             " directly, the far field through Cartesian expansions of order " + std::to_string(setup_.order) +
             " (a fast multipole method; the softened dynamics to the expansions' accuracy)";
  }
  return "";
}

double ForceMethod::potential(const Particles& p) const {
  if (model_ == ForceModel::near_field)
    return near_field_potential(p, setup_.level, setup_.domain ? *setup_.domain : default_domain(p), setup_.softening);
  return allpairs_potential(p, setup_.softening);
}

void HostMethod::evaluate() {
  clear_output();
  const Stopwatch clock;
  compute();
  evaluate_ms_ = clock.ms();
}

DeviceMethod::DeviceMethod(ForceModel model, MethodSetup setup) : ForceMethod(model, std::move(setup)) {
  start_ = std::make_unique<gpu::Event>();
  stop_ = std::make_unique<gpu::Event>();
}

void DeviceMethod::prepare(const Particles& p, std::uint64_t step) {
  const Stopwatch clock;
  upload_particles(p, uploaded_);
  upload_ms_ = clock.ms();
  prepare(uploaded_, step);
}

void DeviceMethod::evaluate() {
  clear_output();  // before the start event: the zeroing is not part of the evaluation's time
  start_->record();
  compute();
  stop_->record();
  evaluated_ = true;
}

void DeviceMethod::wait() { stop_->synchronize(); }

double DeviceMethod::evaluate_ms() { return evaluated_ ? stop_->elapsed_since(*start_) : 0.0; }

namespace {

// The far field's options of a full method.
void check_far_field(const MethodSetup& s) {
  if (s.order < 0 || s.order > farfield::kMaxOrder)
    throw UsageError("--order must be 1.." + std::to_string(farfield::kMaxOrder) + " (0: from --accuracy), not " +
                     std::to_string(s.order));
  if (!(s.accuracy >= 0.0) || !(s.accuracy < 1.0))
    throw UsageError("--accuracy must be a relative error in (0, 1) (0: the default " +
                     format_double(farfield::kDefaultAccuracy) + "), not " + format_double(s.accuracy));
  if (s.mask == Mask::near) throw UsageError("--mask near is for all-pairs kernels: a full method computes every pair");
  if (s.order_sample == 1)
    throw UsageError("--order-sample 1: one target gives no spread to bound the error by; take at least 2 (about "
                     "4000 is the size to ask for)");
  if (s.order_sample != 0 && s.order != 0)
    throw UsageError("--order-sample chooses the order by measuring it; give no --order (given: " +
                     std::to_string(s.order) + ")");
}

}  // namespace

void check_setup(const KernelInfo& k, const MethodSetup& s) {
  if (!(s.softening >= 0.0) || !std::isfinite(s.softening))
    throw UsageError("--softening must be a finite number >= 0, not " + format_double(s.softening));
  if (s.subsample < 1) throw UsageError("--subsample must be at least 1, not " + std::to_string(s.subsample));
  if (s.subsample > 1 && k.far_field())  // before its near part would be named instead
    throw UsageError("--subsample applies to all-pairs kernels; " + k.name +
                     " is a full method (its far field already takes every source through expansions)");
  if (s.subsample > 1 && k.near_field())
    throw UsageError("--subsample applies to all-pairs kernels; " + k.name +
                     " is a near-field kernel (its sources are the neighbor boxes, which a sub-sample would thin "
                     "unevenly)");
  if (s.subsample > 1 && s.mask == Mask::near)
    throw UsageError("--subsample and --mask near exclude each other (a sub-sample of the near field is no near field)");
  if (s.count_interactions && !k.near_field()) throw UsageError("counting mode is for near-field kernels");
  if (!k.far_field() && (s.order != 0 || s.accuracy != 0 || !s.near.empty() || s.order_sample != 0))
    throw UsageError("--order, --order-sample, --accuracy and --near set the far field of a full method (cpu-fmm); " +
                     k.name + " has none");
  if (k.far_field()) check_far_field(s);
  if (s.leaf_size != 0 && !k.adaptive())
    throw UsageError("--leaf-size sets the adaptive tree of cpu-fmm-adaptive and fmm-adaptive; " + k.name +
                     " has none");
  if (k.gpu()) gpu::require("kernel " + k.name);
}

namespace {

// A float32 kernel rounds every position and mass to float32 and squares differences of
// positions: a value past float32's range would become infinite, and positions spanning more than
// about 1e19 give squared distances past it; either way the forces would be NaN. And float32 must
// tell the particles apart (`spacing`, the kernel's own precision): positions spanning fewer than
// 1024 float32 steps at the largest coordinate reach it rounded together (1000 points across 1e-12
// at 0.5 had all come out at one position: zero forces, exit status 0). Refused here, naming the
// first such value or the span, before any work.
constexpr double kFloatLargestSpan = 1e12;

void check_float_range(const Particles& p, bool spacing) {
  constexpr double largest = std::numeric_limits<float>::max();
  const std::pair<const char*, const std::vector<double>*> columns[] = {
      {"x", &p.x}, {"y", &p.y}, {"z", p.dim == 3 ? &p.z : nullptr}, {"m", &p.m}};
  double far = 0, extent = 0;  // over the positions
  for (const auto& [name, values] : columns) {
    if (!values) continue;
    double lo = 0, hi = 0;
    for (std::size_t i = 0; i < values->size(); ++i) {
      const double v = (*values)[i];
      if (!(std::fabs(v) <= largest)) {
        std::ostringstream msg;
        msg << "--precision float: particle " << i << " (id " << p.id_of(i) << ") has " << name << " = " << v
            << ", beyond float32's range (" << largest << "); use --precision double";
        throw UsageError(msg.str());
      }
      lo = i == 0 ? v : std::min(lo, v);
      hi = i == 0 ? v : std::max(hi, v);
    }
    if (std::string(name) == "m") continue;
    if (3 * (hi - lo) * (hi - lo) >= largest) {
      std::ostringstream msg;
      msg << "--precision float: the positions span " << hi - lo << " in " << name
          << ", so squared distances would pass float32's range (" << largest << "); use --precision double";
      throw UsageError(msg.str());
    }
    far = std::max({far, std::fabs(lo), std::fabs(hi)});
    extent = std::max(extent, hi - lo);
  }
  // A float32 kernel forms 1 / d^3 before it multiplies by m r: past about 4.4e12 apart that falls
  // below float32's smallest normal value and the pair's force is lost (a Plummer sphere in metres,
  // span ~1e17: 11374 of 20000 bodies had come out with zero acceleration, exit 0). Kept with a
  // margin: pairs up to 1e12 apart keep 1 / d^3 >= 1e-36.
  if (spacing && extent > kFloatLargestSpan) {
    std::ostringstream msg;
    msg << "--precision float: the positions span " << extent << ", and a float32 kernel's 1 / d^3 underflows for "
        << "pairs that far apart (past about 4e12), which lose their force; use --precision double, or length units "
        << "that make the span at most " << kFloatLargestSpan;
    throw UsageError(msg.str());
  }
  if (!spacing || !(extent > 0)) return;  // one position (or none): nothing to tell apart
  if (extent >= 1024 * float32_spacing(far)) return;
  std::ostringstream msg;
  msg << "--precision float: the positions span " << extent << " at coordinates up to " << far
      << ", where float32 values lie " << float32_spacing(far) << " apart: fewer than 1024 steps across the input, "
      << "so the kernels would see particles rounded together; use --precision double, or coordinates nearer the "
         "origin";
  throw UsageError(msg.str());
}

}  // namespace

void check_setup(const KernelInfo& k, const MethodSetup& s, const Particles& like) {
  if (like.dim != 2 && like.dim != 3) throw UsageError("particles must be 2D or 3D");
  check_setup(k, s);
  if (s.precision == Precision::f32 || s.round_inputs_to_float) check_float_range(like, s.precision == Precision::f32);
  // A full method's boxes must hold its float32 bodies (checked again at each prepare: positions move).
  // An accuracy below the model's error at the highest order (at this leaf level) had run at
  // p = kMaxOrder without a word, and validate then failed it.
  if (k.far_field() && s.order == 0)
    check_accuracy_reachable(like.dim, s.level, s.accuracy > 0 ? s.accuracy : farfield::kDefaultAccuracy, k.adaptive(),
                             like.size());
  if (k.far_field() && like.size() > 0 && s.level >= 0) {
    const Domain d = s.domain ? *s.domain : default_domain(like);
    check_float_resolution(d, like.dim, s.level, s.precision);
    check_float_far_field(d, s.level, s.softening, total_mass(like), s.precision);
    if (s.level >= 2) {
      const double accuracy = s.accuracy > 0 ? s.accuracy : farfield::kDefaultAccuracy;
      const int order = s.order > 0    ? s.order
                        : k.adaptive() ? farfield::adaptive_order(like.dim, accuracy, s.level)
                                       : farfield::order_for_accuracy(like.dim, accuracy, s.level, double(like.size()));
      check_float_far_field_ceiling(total_mass(like), order, s.precision);
    }
  }
  if (k.uses_tree() || s.mask == Mask::near)
    check_level(like.dim, s.level, like.size(), ~0ull, "memory", k.uses_tree() && k.dense_tree());
}

void check_accuracy_reachable(int dim, int level, double accuracy, bool adaptive, std::uint64_t particles) {
  if (adaptive && dim == 3) {  // their own margin, at any depth, resolved or not (adaptive_method.h)
    const double best = farfield::best_adaptive_error_3d();
    if (best > accuracy)
      throw UsageError("--accuracy " + format_double(accuracy) + ": the error model of the adaptive methods reaches " +
                       format_double(best) + " at best (order " + std::to_string(farfield::kMaxOrder) +
                       ", 3D); ask for at least that, or give --order " + std::to_string(farfield::kMaxOrder) +
                       " to run the highest order without a target");
    return;
  }
  if (level < 2) return;  // levels 0 and 1 (and a level still to be chosen) have no far field: nothing to reach
  const double best = farfield::best_modelled_error(dim, level, double(particles));
  if (best > accuracy)
    throw UsageError("--accuracy " + format_double(accuracy) + ": the error model reaches " + format_double(best) +
                     " at best (order " + std::to_string(farfield::kMaxOrder) + ", " + std::to_string(dim) +
                     "D, leaf level " + std::to_string(level) +
                     (particles > 0 ? ", " + std::to_string(particles) + " particles" : std::string()) + "); ask for at least that, or give --order " +
                     std::to_string(farfield::kMaxOrder) + " to run the highest order without a target");
}

void check_finite_accelerations(const std::vector<double>& acc, const Particles& p, Precision precision) {
  const std::size_t dim = std::size_t(p.dim);
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i * dim < acc.size(); ++i)
    for (std::size_t a = 0; a < dim; ++a)
      if (!std::isfinite(acc[i * dim + a])) {
        if (bad++ == 0) first = i;
        break;
      }
  if (bad == 0) return;
  std::ostringstream msg;
  msg << "the accelerations of " << bad << " particle(s) are not finite (the first: particle " << first << ", id "
      << p.id_of(first) << "): " << overflow_advice(precision);
  throw std::runtime_error(msg.str());
}

std::string overflow_advice(Precision precision) {
  const bool f32 = precision == Precision::f32;
  return std::string("a force passed ") + (f32 ? "float32" : "float64") +
         "'s range (pairs so close, or masses so large, that m / d^3 does); use " +
         (f32 ? "--precision double or " : "") + "a larger --softening";
}

std::unique_ptr<ForceMethod> make_method(const KernelInfo& k, const MethodSetup& s, const Particles& like) {
  check_setup(k, s, like);
  if (k.far_field() && s.order_sample != 0)  // measuring needs the layers above (measure/order_search.h)
    throw std::logic_error("make_method: a measured order (order_sample) is searched by make_spread_method or "
                           "make_measured_method");
  return k.make(k, s, like);
}

}  // namespace nf
