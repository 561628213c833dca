#pragma once
//! A force method spread over several GPUs (docs/design.md §15): a layer above the single-device
//! methods, which know nothing of it. The boxes are cut into one part per GPU (decomposition.h);
//! each GPU runs its part through the kernel's own part factory (methods/part_method.h: any GPU
//! near-field kernel), told by MethodSetup::scope which boxes to compute and which launch choices
//! to take from the whole input; an evaluation moves halo bodies and, for Newton-3 kernels that
//! compute cross pairs once, counterforces between the parts (exchange.h) through NCCL.
//!
//! One process drives all GPUs of a host (make_spread_method), or one GPU per process under MPI
//! (make_cluster_method, cli/mpi_main.cc). Timing: GPU 0 records the start; the other GPUs wait
//! for it, and GPU 0 waits for all of them before it records the stop, so an evaluation's time is
//! the wall time of the whole evaluation on every GPU, communication included; its stages split
//! it into the slowest GPU's kernel, the mean kernel, and the rest ("comm": exchanges, packing,
//! waiting at them).

#include <functional>
#include <memory>
#include <vector>

#include "distributed/cross_pairs.h"
#include "distributed/exchange.h"
#include "methods/registry.h"

namespace nf {

//! How a run spreads a kernel: over `gpus` GPUs, cross pairs computed as `cross` asks.
struct Spread {
  int gpus = 1;
  CrossPairs cross = CrossPairs::automatic;
};

//! The way kernel k computes cross pairs for `requested` (automatic: once for Newton-3 kernels
//! that are not deterministic, twice for the others). UsageError for once without Newton-3.
CrossPairs resolve_cross_pairs(const KernelInfo& k, CrossPairs requested);

//! Refuses (UsageError) a --cross-pairs `text` other than auto where no run is spread (`spread`
//! false: one GPU in one process), so that the option is said, not dropped without a word.
void check_cross_pairs_used(const std::string& text, bool spread);

//! True when a spread run of k must reproduce the one-GPU run bit for bit: a deterministic kernel
//! computing cross pairs twice (each GPU then sums its particles' forces in the one-GPU order).
bool matches_one_gpu_bitwise(const KernelInfo& k, CrossPairs requested);

//! True when the environment variable NEARFIELD_EMULATE_GPUS is 1: `--gpus G` then places all G
//! parts on CUDA device 0 and moves their messages with device-memory copies
//! (DeviceLoopbackTransport) instead of NCCL, so the spread path runs, and its results can be
//! checked, on a machine with one GPU and without NCCL. A testing aid: the parts run one after
//! another on one GPU, so timings are meaningless.
bool emulating_gpus();

//! The sentence commands add to their --gpus help about NEARFIELD_EMULATE_GPUS.
const char* emulate_gpus_help();

//! Refuses (UsageError), before any work, a request for `gpus` GPUs this build or machine cannot
//! serve: fewer than 1, a kernel that cannot be spread (no part factory: only GPU near-field
//! kernels have one), no GPU, and unless emulating_gpus(): a build without NCCL, fewer CUDA
//! devices than asked for, or no loadable libnccl. gpus == 1 always passes.
void check_gpus(const KernelInfo& k, int gpus);

//! Kernel k's method for setup `s` on particles like `like`. Under MPI with more than one process
//! (process_group.h): spread over the processes, one part each (make_process_method). Otherwise
//! make_measured_method (measure/order_search.h: make_method, after a measured order's search) when
//! spread.gpus is 1,
//! else the method spread over spread.gpus GPUs of this process (checked as check_gpus does;
//! counting mode refused): parts 0..G-1 on devices 0..G-1, NCCL between them; with
//! emulating_gpus(), every part on device 0 and DeviceLoopbackTransport between them.
std::unique_ptr<ForceMethod> make_spread_method(const KernelInfo& k, const MethodSetup& s, const Particles& like,
                                                const Spread& spread);

//! Which parts of a spread evaluation this process drives and how they reach the others: every
//! part here (make_spread_method), or one part per process under MPI (cli/mpi_main.cc).
struct GpuCluster {
  int parts = 1;                          //!< GPUs of the whole evaluation, all processes together
  std::vector<int> local;                 //!< the parts this process drives, ascending
  std::vector<int> device;                //!< the CUDA device of each local part
  std::shared_ptr<Transport> transport;   //!< messages between parts (NCCL)
  std::function<void()> barrier;                      //!< all processes meet before an evaluation (null: one process)
  std::function<double(double)> max_over_processes;  //!< a time's maximum over the processes (null: one process)
};

//! The spread method's view for a process that drives only some of the parts (MPI).
class ClusterMethod : public ForceMethod {
 public:
  //! The input rows whose accelerations this process computes (after prepare), ascending;
  //! accelerations() holds NaN elsewhere.
  virtual std::vector<std::uint32_t> rows_computed_here() = 0;

 protected:
  using ForceMethod::ForceMethod;
};

//! Kernel k's method over `cluster`: every process computes the same decomposition from the same
//! input and prepares only its local parts; an evaluation's time is the longest over the processes.
std::unique_ptr<ClusterMethod> make_cluster_method(const KernelInfo& k, const MethodSetup& s, const Spread& spread,
                                                   GpuCluster cluster);

}  // namespace nf
