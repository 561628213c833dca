// The CPU kernel families: near-field kernels over the CPU tree, and the float64 all-pairs
// reference.
#include <algorithm>
#include <limits>

#include "allpairs/allpairs_cpu.h"
#include "methods/eval_common.h"
#include "methods/evaluation.h"
#include "methods/force_field.h"

namespace nf {
namespace {

using detail::Clock;
using detail::ms_since;

template <class T>
std::vector<Body<T>> sorted_bodies(const Particles& p, const Tree& t) {
  std::vector<Body<T>> b(p.size());
  for (std::size_t s = 0; s < b.size(); ++s) {
    const std::uint32_t i = t.order[s];
    b[s] = {T(p.x[i]), T(p.y[i]), p.dim == 3 ? T(p.z[i]) : T(0), T(p.m[i])};
  }
  return b;
}

template <int D, class T>
class CpuNearField : public Evaluation {
 public:
  CpuNearField(const PerShape<CpuNearFieldFn>& drivers, const KernelInfo& k, const Particles& p, const ForceSetup& s)
      : driver_(drivers.get<D, T>()), count_(s.count_interactions) {
    const auto t0 = Clock::now();
    tree_ = build_tree(p, s.level, s.domain, k.dense_tree());
    tree_ms = ms_since(t0);
    bodies_ = sorted_bodies<T>(p, tree_);
    acc_.resize(p.size());
    view_ = {&tree_, bodies_.data(), acc_.data(), detail::softening_squared<T>(s.softening), nullptr, &scratch_};
  }
  void run() override {
    unsigned long long count = 0;
    view_.counter = count_ ? &count : nullptr;
    driver_(view_);
    counted_ = count;
  }
  double run_timed_ms() override {
    const auto t0 = Clock::now();
    run();
    return ms_since(t0);
  }
  std::vector<double> accelerations() override { return detail::scatter<D, T>(acc_, tree_.order); }
  void poison_output() override {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::fill(acc_.begin(), acc_.end(), Acc4<T>{nan, nan, nan, nan});
  }

 private:
  CpuNearFieldFn<T> driver_;
  bool count_;
  Tree tree_;
  std::vector<Body<T>> bodies_;
  std::vector<Acc4<T>> acc_, scratch_;
  HostNearField<T> view_;
};

class CpuAllPairs : public Evaluation {
 public:
  CpuAllPairs(const Particles& p, const ForceSetup& s) : dim_(p.dim), softening_(s.softening) {
    bodies_ = bodies_as_seen(p, s.round_inputs_to_float ? Precision::f32 : s.precision);
    if (s.mask == Mask::near) cells_ = cells_from_positions(p, s.level, s.domain);
    masked_ = s.mask == Mask::near;
  }
  void run() override { acc_ = cpu_allpairs(dim_, bodies_, masked_ ? &cells_ : nullptr, softening_); }
  double run_timed_ms() override {
    const auto t0 = Clock::now();
    run();
    return ms_since(t0);
  }
  std::vector<double> accelerations() override { return acc_; }
  void poison_output() override { acc_.assign(bodies_.size() * dim_, std::numeric_limits<double>::quiet_NaN()); }

 private:
  int dim_;
  double softening_;
  bool masked_ = false;
  std::vector<Body<double>> bodies_;
  std::vector<Cell> cells_;
  std::vector<double> acc_;
};

// A simulation's all-pairs forces on the CPU (float64 arithmetic on the inputs as the precision
// rounds them), optionally over a sub-sample of the sources.
class CpuAllPairsForces : public ForceField {
 public:
  explicit CpuAllPairsForces(const FieldSetup& s)
      : ForceField(s.subsample > 1 ? FieldModel::subsampled : FieldModel::all_pairs, s) {}
  bool on_device() const override { return false; }
  void accelerations(const Particles& p, std::uint64_t step, std::vector<double>& acc) override {
    const auto t0 = Clock::now();
    const std::vector<Body<double>> bodies = bodies_as_seen(p, setup_.precision);
    const int k = setup_.subsample;
    std::vector<Body<double>> sources;
    if (k > 1)
      for (std::size_t j = step % std::uint64_t(k); j < bodies.size(); j += std::size_t(k))
        sources.push_back({bodies[j].x, bodies[j].y, bodies[j].z, bodies[j].m * k});
    times_.transfer = ms_since(t0);
    const auto t1 = Clock::now();
    acc = k > 1 ? cpu_allpairs_sources(p.dim, bodies, sources, setup_.softening)
                : cpu_allpairs(p.dim, bodies, nullptr, setup_.softening);
    times_.forces = ms_since(t1);
  }
};

}  // namespace

KernelFamily cpu_near_field(PerShape<CpuNearFieldFn> drivers) {
  KernelFactory make = [drivers](const KernelInfo& k, const Particles& p, const ForceSetup& s) -> std::unique_ptr<Evaluation> {
    return detail::make_shaped<CpuNearField>(p.dim, s.precision, drivers, k, p, s);
  };
  // A simulation's step prepares and runs one evaluation, as forces does (tree of the current positions).
  ForceFieldFactory field = [](const KernelInfo& k, const Particles&, const FieldSetup& s) -> std::unique_ptr<ForceField> {
    return make_evaluation_field(k, s);
  };
  return {std::move(make), std::move(field)};
}

KernelFamily cpu_all_pairs() {
  KernelFactory make = [](const KernelInfo&, const Particles& p, const ForceSetup& s) -> std::unique_ptr<Evaluation> {
    return std::make_unique<CpuAllPairs>(p, s);
  };
  ForceFieldFactory field = [](const KernelInfo&, const Particles&, const FieldSetup& s) -> std::unique_ptr<ForceField> {
    return std::make_unique<CpuAllPairsForces>(s);
  };
  return {std::move(make), std::move(field)};
}

}  // namespace nf
