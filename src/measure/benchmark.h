#pragma once
//! The benchmark method (DESIGN.md section 7), in one place for `bench`, the experiments and any
//! program that links the harness: warm-up runs, then repeated timed runs of one force
//! evaluation (CUDA events on the GPU, the steady clock on the CPU), reported as median, min and
//! max; the tree build is timed apart, never hidden in the kernel time.

#include <cstdint>
#include <string>
#include <vector>

#include "methods/evaluation.h"
#include "measure/stats.h"
#include "measure/validation.h"

namespace nf {

//! Timings and rates of one kernel on one input.
struct KernelTiming {
  TimingStats time;                 //!< ms per evaluation
  std::uint64_t interactions = 0;   //!< directed i<-j interactions one evaluation stands for
  double interactions_per_s = 0;    //!< at the median time
  double gflops = 0;                //!< at flops_per_interaction
  int flops_per_interaction = 0;    //!< 20 in 3D, 15 in 2D
  double tree_ms = 0;               //!< tree build of the prepared evaluation (near-field kernels)
  double plan_ms = 0;               //!< the kernel's plan from the tree (work lists), once per tree
  int warmup = 0, reps = 0;
  // Multi-GPU runs (setup.gpus > 1): medians over the timed runs of Evaluation::span.
  int gpus = 1;
  double comm_ms = 0;               //!< time outside the slowest GPU's kernel: exchanges, packing, waiting
  double comm_share = 0;            //!< comm_ms / time of the same run
  double kernel_max_ms = 0;         //!< the slowest GPU's kernel
  double kernel_imbalance = 1;      //!< slowest / mean kernel time over the GPUs
  std::uint64_t halo_bodies = 0;    //!< bodies moved between GPUs per evaluation
};

//! Interactions an evaluation stands for: the useful near-field interactions for near-field
//! kernels (a Newton-3 pair counts twice), N^2 for all-pairs kernels (masked or not).
std::uint64_t credited_interactions(const KernelInfo& k, std::size_t n, std::uint64_t near_field);

//! With a warm-up, untimed runs continue until at least this long has passed (up to kMaxWarmupRuns).
constexpr double kMinWarmupMs = 50.0;
constexpr int kMaxWarmupRuns = 1000000;

//! Prepares `k` on `p` and times it: `warmup` untimed runs (with warmup >= 1, at least
//! kMinWarmupMs of them), then `reps` timed ones.
//! `near_field` is near_field_interactions() of the input's tree (used for near-field kernels).
KernelTiming time_kernel(const KernelInfo& k, const Particles& p, const ForceSetup& s, int warmup, int reps,
                         std::uint64_t near_field);

//! The GPU tree build, stage by stage, against a bare CUB sort of the same keys and the CPU build.
struct TreeBuildTiming {
  static constexpr int kStages = 7;
  static const char* const kStageNames[kStages];  //!< domain, keys, sort, box_starts, neighbors, dense, total
  TimingStats stage[kStages];
  TimingStats bare_sort, cpu;
  bool dense = false;  //!< the dense arrays were built (levels up to max_dense_level)
};
//! `given`: the domain is given (the GPU skips its reduction); null: reduced on the GPU.
TreeBuildTiming time_tree_build(const Particles& p, int level, const Domain& domain, bool given, int warmup, int reps,
                                int cpu_reps);

//! What validating one kernel against a reference found.
struct KernelCheck {
  Metrics metrics;
  bool repeat_checked = false;  //!< deterministic kernels: run twice and compared bit for bit
  bool repeatable = true;
  bool one_gpu_checked = false;  //!< multi-GPU runs that must equal one GPU bit for bit were compared with it
  bool one_gpu_equal = true;
  bool pass = false;            //!< within tolerance, finite, and repeatable where claimed
};
//! Runs `k` (output poisoned first) and compares with `reference`; a kernel flagged
//! deterministic runs a second time and must reproduce its output bit for bit. On several GPUs
//! (s.gpus > 1), a deterministic kernel computing cross pairs twice must also reproduce the
//! one-GPU output bit for bit.
KernelCheck validate_kernel(const KernelInfo& k, const Particles& p, const ForceSetup& s,
                         const std::vector<double>& reference);

//! A rough cost of a sweep point for progress estimates: interactions over a typical rate of the
//! kernel's kind (GPU, OpenMP CPU, one CPU thread). Only ratios between points matter.
double estimated_cost(const KernelInfo& k, int dim, int level, double n);

}  // namespace nf
