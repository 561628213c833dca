// The CPU all-pairs family: cpu-allpairs, the float64 reference, on the inputs as a kernel of the
// setup's precision sees them; every pair, the near-field pairs (--mask near), or a sub-sample of
// the sources (a simulation's --subsample).
#include <algorithm>
#include <limits>

#include "allpairs/allpairs_cpu.h"
#include "core/bodies.h"
#include "methods/registry.h"

namespace nf {
namespace {

class CpuAllPairsMethod final : public HostMethod {
 public:
  CpuAllPairsMethod(const MethodSetup& s, int dim)
      : HostMethod(s.subsample > 1 ? ForceModel::subsampled : ForceModel::all_pairs, s), dim_(dim) {}

  void prepare(const Particles& p, std::uint64_t step) override {
    const Stopwatch clock;
    bodies_ = bodies_as_seen(p, setup_.round_inputs_to_float ? Precision::f32 : setup_.precision);
    if (setup_.mask == Mask::near)
      cells_ = cells_from_positions(p, setup_.level, setup_.domain ? *setup_.domain : default_domain(p));
    const int k = setup_.subsample;
    sources_.clear();
    if (k > 1)
      for (std::size_t j = step % std::uint64_t(k); j < bodies_.size(); j += std::size_t(k))
        sources_.push_back({bodies_[j].x, bodies_[j].y, bodies_[j].z, bodies_[j].m * k});
    acc_.assign(bodies_.size() * dim_, 0.0);
    transfer_ms_ = clock.ms();
  }
  std::vector<double> accelerations() override { return acc_; }
  void poison_output() override { std::fill(acc_.begin(), acc_.end(), std::numeric_limits<double>::quiet_NaN()); }
  StageTimes times() override { return {{{"transfer", transfer_ms_}}, evaluate_ms(), {}}; }

 protected:
  void clear_output() override { std::fill(acc_.begin(), acc_.end(), 0.0); }
  void compute() override {
    if (setup_.subsample > 1)
      cpu_allpairs_sources(dim_, bodies_, sources_, setup_.softening, acc_.data());
    else
      cpu_allpairs(dim_, bodies_, setup_.mask == Mask::near ? &cells_ : nullptr, setup_.softening, acc_.data(),
                   setup_.progress);
  }

 private:
  int dim_;
  std::vector<Body<double>> bodies_, sources_;
  std::vector<Cell> cells_;
  std::vector<double> acc_;
  double transfer_ms_ = 0;
};

}  // namespace

MethodFamily cpu_all_pairs() {
  MethodFactory make = [](const KernelInfo&, const MethodSetup& s, const Particles& like) -> std::unique_ptr<ForceMethod> {
    return std::make_unique<CpuAllPairsMethod>(s, like.dim);
  };
  return {std::move(make), {}};
}

}  // namespace nf
