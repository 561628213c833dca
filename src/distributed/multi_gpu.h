#pragma once
//! Near-field evaluations spread over several GPUs of this host (DESIGN.md section 15), one
//! process driving them all: the boxes are cut into one part per GPU (decomposition.h); each GPU
//! prepares its part through the kernel's own registry factory (any GPU near-field kernel), with
//! the whole input's path choices (methods/device_part.h); an evaluation moves halo bodies and,
//! for Newton-3 kernels computing cross pairs once, counterforces through NCCL (exchange.h,
//! nccl_transport.h). `prepare` (methods/evaluation.h) comes here when ForceSetup::gpus > 1, so
//! forces, validate, bench and any later command (simulate) get --gpus by setting that field.
//!
//! Timing: GPU 0 records the start; the other GPUs wait for it, and GPU 0 waits for all of them
//! before it records the stop, so run_timed_ms is the wall time of the whole evaluation on every
//! GPU, communication included. Evaluation::span splits it: the slowest GPU's kernel, and the
//! rest (exchanges, packing and the waiting at them).

#include <functional>
#include <memory>
#include <vector>

#include "methods/evaluation.h"
#include "distributed/exchange.h"

namespace nf {

//! The way kernel k computes cross pairs for `requested` (automatic: once for Newton-3 kernels
//! that are not deterministic, twice for the others). UsageError for once without Newton-3.
CrossPairs resolve_cross_pairs(const KernelInfo& k, CrossPairs requested);

//! True when a multi-GPU run of k must reproduce the one-GPU run bit for bit: a deterministic
//! kernel computing cross pairs twice (each GPU then sums its particles' forces in the one-GPU
//! order).
bool matches_one_gpu_bitwise(const KernelInfo& k, CrossPairs requested);

//! True when the environment variable NEARFIELD_EMULATE_GPUS is 1: `--gpus G` then places all G
//! parts on CUDA device 0 and moves their messages with device-memory copies
//! (DeviceLoopbackTransport) instead of NCCL, so the multi-GPU path runs, and its results can be
//! checked, on a machine with one GPU and without NCCL. A testing aid: the parts run one after
//! another on one GPU, so timings are meaningless.
bool emulating_gpus();

//! The sentence commands add to their --gpus help about NEARFIELD_EMULATE_GPUS.
const char* emulate_gpus_help();

//! Refuses (UsageError), before any work, a request for `gpus` GPUs this build or machine cannot
//! serve: fewer than 1, a kernel that is not a GPU near-field kernel, no GPU, and unless
//! emulating_gpus(): a build without NCCL, fewer CUDA devices than asked for, or no loadable
//! libnccl. gpus == 1 always passes.
void check_gpus(const KernelInfo& k, int gpus);

//! The evaluation of `k` over setup.gpus GPUs of this process (checked as check_gpus does;
//! counting mode refused): parts 0..G-1 on devices 0..G-1, NCCL between them; with
//! emulating_gpus(), every part on device 0 and DeviceLoopbackTransport between them.
std::unique_ptr<Evaluation> prepare_multi_gpu(const KernelInfo& k, const Particles& p, const ForceSetup& setup);

//! Which parts of a multi-GPU evaluation this process drives and how they reach the others: every
//! part here (prepare_multi_gpu), or one part per process under MPI (src/cli/mpi_main.cc).
struct GpuCluster {
  int parts = 1;                          //!< GPUs of the whole evaluation, all processes together
  std::vector<int> local;                 //!< the parts this process drives, ascending
  std::vector<int> device;                //!< the CUDA device of each local part
  std::shared_ptr<Transport> transport;   //!< messages between parts (NCCL)
  std::function<void()> barrier;                      //!< all processes meet before a timed run (null: one process)
  std::function<double(double)> max_over_processes;  //!< a time's maximum over the processes (null: one process)
};

//! The evaluation of `k` over `cluster`: every process computes the same decomposition from the
//! same input and prepares only its local parts. run_timed_ms is the longest span over the
//! processes; accelerations() holds the rows of the local parts (NaN elsewhere).
std::unique_ptr<Evaluation> prepare_on_cluster(const KernelInfo& k, const Particles& p, const ForceSetup& setup,
                                               GpuCluster cluster);

//! The input rows whose accelerations evaluation `e` (from prepare_on_cluster) computes here.
std::vector<std::uint32_t> rows_computed_here(Evaluation& e);

}  // namespace nf
