#include "methods/force_field.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/errors.h"
#include "tree/domain.h"
#include "core/gpu_runtime.h"
#include "methods/evaluation.h"
#include "methods/potential.h"
#include "distributed/multi_gpu.h"
#include "tree/tree.h"

namespace nf {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// make_evaluation_field's field.
class EvaluationForces final : public ForceField {
 public:
  EvaluationForces(const KernelInfo& k, const FieldSetup& s) : ForceField(FieldModel::near_field, s), kernel_(k) {}
  bool on_device() const override { return false; }
  void accelerations(const Particles& p, std::uint64_t, std::vector<double>& acc) override {
    ForceSetup s;
    s.level = setup_.level;
    s.domain = default_domain(p);  // the boxes host_potential uses
    s.softening = setup_.softening;
    s.precision = setup_.precision;
    s.gpus = setup_.gpus;
    const auto t0 = Clock::now();
    std::unique_ptr<Evaluation> e = prepare(kernel_, p, s);
    const double prepared = ms_since(t0);
    times_.tree = e->tree_ms;
    times_.plan = e->plan_ms;
    times_.forces = e->run_timed_ms();
    const auto t1 = Clock::now();
    acc = e->accelerations();
    // Bodies sorted in (several GPUs: the decomposition, selections and uploads too), accelerations out.
    times_.transfer = std::max(0.0, prepared - e->tree_ms - e->plan_ms) + ms_since(t1);
  }

 private:
  const KernelInfo& kernel_;
};

}  // namespace

std::unique_ptr<ForceField> make_evaluation_field(const KernelInfo& k, const FieldSetup& setup) {
  return std::make_unique<EvaluationForces>(k, setup);
}

const char* to_string(FieldModel m) {
  switch (m) {
    case FieldModel::all_pairs: return "all-pairs";
    case FieldModel::subsampled: return "subsampled";
    case FieldModel::near_field: return "near-field";
  }
  return "?";
}

void ForceField::accelerations(const Particles&, std::uint64_t, std::vector<double>&) {
  throw std::logic_error("a device force field was given host particles");
}
void ForceField::accelerations(const DeviceParticles&, std::uint64_t, DeviceVectors&) {
  throw std::logic_error("a host force field was given device particles");
}
bool ForceField::accelerations_moving(DeviceParticles& p, std::uint64_t step, DeviceVectors& acc, DeviceVectors&,
                                      gpu::DeviceBuffer<std::uint32_t>&) {
  accelerations(p, step, acc);
  return false;
}
double ForceField::host_potential(const Particles& p) const {
  if (model_ == FieldModel::near_field) return near_field_potential(p, setup_.level, default_domain(p), setup_.softening);
  return allpairs_potential(p, setup_.softening);
}
double ForceField::potential(const DeviceParticles&) {
  throw std::logic_error("a host force field was given device particles");
}
std::string ForceField::potential_method() const { return "CPU, float64"; }

std::string ForceField::describe() const {
  switch (model_) {
    case FieldModel::all_pairs:
      return "all pairs: the exact softened dynamics";
    case FieldModel::subsampled:
      return "all pairs sub-sampled: every " + std::to_string(setup_.subsample) +
             "th source per step (offset = step mod " + std::to_string(setup_.subsample) + "), masses times " +
             std::to_string(setup_.subsample) + "; an approximation of the exact softened dynamics";
    case FieldModel::near_field:
      return "near field only: forces from the particles in the same and adjacent boxes at level " +
             std::to_string(setup_.level) +
             " (boxes over each step's bounding square/cube); NOT the full softened dynamics";
  }
  return "";
}

std::unique_ptr<ForceField> make_force_field(const KernelInfo& k, const Particles& initial, const FieldSetup& s) {
  if (initial.dim != 2 && initial.dim != 3) throw UsageError("particles must be 2D or 3D");
  if (!(s.softening >= 0.0) || !std::isfinite(s.softening)) throw UsageError("--softening must be a finite number >= 0");
  if (s.subsample < 1) throw UsageError("--subsample must be at least 1, not " + std::to_string(s.subsample));
  if (s.subsample > 1 && k.near_field())
    throw UsageError("--subsample applies to all-pairs kernels; " + k.name +
                     " is a near-field kernel (its sources are the neighbor boxes, which a sub-sample would thin "
                     "unevenly)");
  check_gpus(k, s.gpus);  // before the kernel's own refusals: the message names --gpus
  if (k.gpu()) gpu::require("kernel " + k.name);
  if (k.near_field()) check_level(initial.dim, s.level, initial.size(), ~0ull, "memory", k.dense_tree());
  if (s.gpus > 1) return make_evaluation_field(k, s);  // check_gpus above: a GPU near-field kernel
  if (!k.make_field) throw UsageError("kernel " + k.name + " cannot drive a simulation (no force field)");
  return k.make_field(k, initial, s);
}

}  // namespace nf
