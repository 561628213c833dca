#pragma once
//! The one interface every kernel is run through by `forces`, `validate`, `bench`, the
//! experiments and the tests: a kernel from the registry (kernels.h) prepared on one input.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tree/domain.h"
#include "core/particles.h"
#include "methods/registry.h"
#include "distributed/cross_pairs.h"
#include "tree/tree.h"
#include "tree/tree_gpu.h"

namespace nf {

struct DevicePlacement;

//! Which pairs an all-pairs kernel computes: all of them, or only the near field at a level.
enum class Mask { all, near };
const char* to_string(Mask m);
Mask parse_mask(const std::string& text);

//! Everything about one force evaluation except the particles.
struct ForceSetup {
  int level = 0;                     //!< tree level (near-field kernels and the near mask)
  Domain domain;                     //!< resolved domain (explicit or default)
  double softening = 1e-4;           //!< eps
  Precision precision = Precision::f32;
  Mask mask = Mask::all;             //!< all-pairs kernels only
  bool round_inputs_to_float = false;  //!< float64 arithmetic on float32-rounded inputs (references)
  bool count_interactions = false;   //!< counting mode: kernels count what they evaluate
  int gpus = 1;                      //!< > 1: a GPU near-field kernel spread over this host's GPUs (distributed/)
  CrossPairs cross_pairs = CrossPairs::automatic;  //!< with gpus > 1: how pairs between two GPUs' parts are computed
  const DevicePlacement* placement = nullptr;      //!< set by the multi-GPU driver for one GPU's part
};

//! How a multi-GPU evaluation's last timed run splits (all zero for one GPU).
struct MultiGpuSpan {
  int gpus = 1;
  double kernel_max_ms = 0, kernel_mean_ms = 0;  //!< the kernels, slowest GPU and mean over GPUs
  double comm_ms = 0;             //!< the rest of the evaluation's time: exchanges, packing, waiting at them
  std::uint64_t halo_bodies = 0;  //!< bodies moved between GPUs per evaluation
};

//! One kernel prepared on one input: inputs converted and uploaded, tree built. `run` then
//! performs exactly one force evaluation (what the benchmark times).
class Evaluation {
 public:
  virtual ~Evaluation() = default;
  //! One force evaluation; returns when it is complete.
  virtual void run() = 0;
  //! One force evaluation, timed: CUDA events around the launch(es) on the GPU, the steady clock
  //! on the CPU. Milliseconds.
  virtual double run_timed_ms() = 0;
  //! Accelerations of the last run, input order, dim values per particle.
  virtual std::vector<double> accelerations() = 0;
  //! Overwrites the output with NaN, so a run that skips a particle cannot pass a test.
  virtual void poison_output() = 0;
  //! Counting mode: interactions the kernel evaluated in the last run.
  virtual unsigned long long counted_interactions() const { return counted_; }

  double tree_ms = 0;          //!< tree build time (0 for all-pairs kernels)
  double plan_ms = 0;          //!< the kernel's plan (work lists from the tree), 0 for most kernels
  GpuBuildTimes gpu_build;     //!< GPU near-field kernels: the build's stages
  MultiGpuSpan span;           //!< multi-GPU evaluations: the last timed run, split

 protected:
  unsigned long long counted_ = 0;
};

//! Prepares `kernel` on `p` through its registry factory; throws UsageError for a GPU kernel
//! without a GPU (or in a CPU-only build) and for a setup the kernel cannot take. With
//! setup.gpus > 1 the evaluation spreads over that many GPUs (distributed/multi_gpu.h).
std::unique_ptr<Evaluation> prepare(const KernelInfo& kernel, const Particles& p, const ForceSetup& setup);

//! Useful directed interactions of the near field of a tree: sum over boxes of
//! n_b (n_b - 1) + n_b * (particles in its neighbors). Newton-3 pairs count twice.
std::uint64_t near_field_interactions(const Tree& t);

//! Bodies as a kernel of precision `p` sees them, widened back to float64 (exact).
std::vector<Body<double>> bodies_as_seen(const Particles& p, Precision precision);

}  // namespace nf
