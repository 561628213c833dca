#pragma once
//! The benchmark method (docs/design.md §7), in one place for `bench`, the experiments and any
//! program that links the measurement library: warm-up runs, then repeated timed evaluations of
//! one prepared method (CUDA events on the GPU, the steady clock on the CPU), reported as median,
//! min and max; the tree build and the plan are timed apart, never hidden in the evaluation.

#include <cstdint>
#include <string>
#include <vector>

#include "methods/force_method.h"
#include "methods/registry.h"
#include "measure/stats.h"

namespace nf {

//! Timings of one prepared method: repeated evaluations of one set of positions.
struct MethodTiming {
  TimingStats time;                  //!< ms per evaluation
  std::vector<Stage> prepare;        //!< the prepare's stages (tree, plan, transfer)
  std::vector<Stage> evaluate;       //!< each evaluation stage's median over the timed runs
  std::vector<Count> counts;         //!< of the last evaluation
  int warmup = 0, reps = 0;
  //! A stage's time in `prepare` or `evaluate` (0 when absent).
  double stage(const std::string& name) const;
};

//! With a warm-up, untimed evaluations continue until at least this long has passed (up to
//! kMaxWarmupRuns).
constexpr double kMinWarmupMs = 50.0;
constexpr int kMaxWarmupRuns = 1000000;

//! Times method `m`, prepared on an input: `warmup` untimed evaluations (with warmup >= 1, at
//! least kMinWarmupMs of them), then `reps` timed ones.
MethodTiming time_method(ForceMethod& m, int warmup, int reps);

//! Interactions an evaluation stands for: the useful near-field interactions for near-field
//! kernels (a Newton-3 pair counts twice), N^2 for all-pairs kernels (masked or not).
std::uint64_t credited_interactions(const KernelInfo& k, std::size_t n, std::uint64_t near_field);

//! Interactions per second at `ms` per evaluation, and GFLOP/s at the flop convention of `dim`
//! (20 per 3D interaction, 15 per 2D: docs/design.md §1).
struct Rates {
  double interactions_per_s = 0, gflops = 0;
  int flops_per_interaction = 0;
};
Rates rates(std::uint64_t interactions, double ms, int dim);

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

//! A rough cost of a sweep point for progress estimates: interactions over a typical rate of the
//! kernel's kind (GPU, OpenMP CPU, one CPU thread). Only ratios between points matter.
double estimated_cost(const KernelInfo& k, int dim, int level, double n);

}  // namespace nf
