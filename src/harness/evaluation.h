#pragma once
//! The kernel registry and the one interface every kernel is run through by `forces`, `validate`,
//! `bench` and the experiments. Adding a kernel: write it (CPU in nearfield_cpu.cc, GPU as a
//! .cu file behind a driver), add a KernelInfo line in evaluation.cc and a case in `prepare`.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/domain.h"
#include "common/particles.h"
#include "quadtree/tree.h"
#include "quadtree/tree_gpu.h"

namespace nf {

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
};

//! A kernel as users name it after --kernel.
struct KernelInfo {
  std::string name;
  bool gpu = false;
  bool near_field = false;  //!< uses the tree (else all-pairs, with --mask)
  bool newton3 = false;     //!< computes each pair once
  bool atomics = false;     //!< output accumulated with atomics (zeroed inside each evaluation)
  std::string summary;
  bool openmp = false;      //!< CPU kernel running on the OpenMP team (else one thread)
};

//! Every kernel, CPU first.
const std::vector<KernelInfo>& all_kernels();
//! The kernel of this name; UsageError listing the names otherwise.
const KernelInfo& find_kernel(const std::string& name);
//! Kernels this machine can run (GPU ones only with a device).
std::vector<std::string> available_kernels();
//! Splits "a,b,c" and checks every name (empty or "all": every available kernel).
std::vector<std::string> parse_kernel_list(const std::string& text);

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
  GpuBuildTimes gpu_build;     //!< GPU near-field kernels: the build's stages

 protected:
  unsigned long long counted_ = 0;
};

//! Prepares `kernel` on `p`; throws UsageError for a GPU kernel without a GPU.
std::unique_ptr<Evaluation> prepare(const KernelInfo& kernel, const Particles& p, const ForceSetup& setup);

//! Useful directed interactions of the near field of a tree: sum over boxes of
//! n_b (n_b - 1) + n_b * (particles in its neighbors). Newton-3 pairs count twice.
std::uint64_t near_field_interactions(const Tree& t);

//! Bodies as a kernel of precision `p` sees them, widened back to float64 (exact).
std::vector<Body<double>> bodies_as_seen(const Particles& p, Precision precision);

}  // namespace nf
