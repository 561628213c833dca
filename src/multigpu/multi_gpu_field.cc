#include "multigpu/multi_gpu_field.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "common/domain.h"
#include "harness/evaluation.h"
#include "multigpu/multi_gpu.h"

namespace nf {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

class MultiGpuForces final : public ForceField {
 public:
  MultiGpuForces(const KernelInfo& k, const FieldSetup& s) : ForceField(FieldModel::near_field, s), kernel_(k) {}
  bool on_device() const override { return false; }

  // What times() reports of a step:
  // - tree: the slowest part's tree build, plan: the slowest part's plan (Evaluation::tree_ms and
  //   plan_ms of the multi-GPU evaluation; with emulated GPUs the parts are built one after
  //   another and this is still the slowest one);
  // - forces: the timed evaluation (run_timed_ms): from the lead GPU's start to the moment every
  //   GPU is done, halo packing and exchange (and counterforces) included;
  // - transfer: the rest of the host's wall time for the step's forces: the decomposition on the
  //   host, each part's selection and upload (and, with emulated GPUs, the other parts' builds),
  //   then the accelerations downloaded and put in input order.
  void accelerations(const Particles& p, std::uint64_t, std::vector<double>& acc) override {
    ForceSetup s;
    s.level = setup_.level;
    s.domain = default_domain(p);  // the boxes a one-GPU field and host_potential use
    s.softening = setup_.softening;
    s.precision = setup_.precision;
    s.gpus = setup_.gpus;
    const auto t0 = Clock::now();
    std::unique_ptr<Evaluation> e = prepare(kernel_, p, s);  // prepare_multi_gpu
    const double prepared = ms_since(t0);
    times_.tree = e->tree_ms;
    times_.plan = e->plan_ms;
    times_.forces = e->run_timed_ms();
    const auto t1 = Clock::now();
    acc = e->accelerations();
    times_.transfer = std::max(0.0, prepared - e->tree_ms - e->plan_ms) + ms_since(t1);
  }

 private:
  const KernelInfo& kernel_;
};

}  // namespace

std::unique_ptr<ForceField> make_multi_gpu_field(const KernelInfo& k, const Particles& initial, const FieldSetup& s) {
  if (s.gpus < 2) throw std::logic_error("make_multi_gpu_field: for 2 or more GPUs");
  check_gpus(k, s.gpus);
  (void)initial;  // every step decomposes its own positions
  return std::make_unique<MultiGpuForces>(k, s);
}

}  // namespace nf
