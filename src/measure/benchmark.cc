#include "measure/benchmark.h"

#include <cmath>

#include "tree/box_rule.h"
#include "core/timing.h"
#include "physics/interaction.h"
#include "tree/tree_gpu.h"

namespace nf {

std::uint64_t credited_interactions(const KernelInfo& k, std::size_t n, std::uint64_t near_field) {
  // All-pairs kernels evaluate N^2 pairs (i = j included, contributing zero), masked or not.
  return k.near_field() ? near_field : std::uint64_t(n) * n;
}

Rates rates(std::uint64_t interactions, double ms, int dim) {
  Rates r;
  r.flops_per_interaction = dim == 3 ? SoftenedGravity<3, float>::flops : SoftenedGravity<2, float>::flops;
  r.interactions_per_s = ms > 0 ? double(interactions) / (ms * 1e-3) : 0.0;
  r.gflops = r.interactions_per_s * r.flops_per_interaction * 1e-9;
  return r;
}

double MethodTiming::stage(const std::string& name) const {
  for (const std::vector<Stage>* list : {&prepare, &evaluate})
    for (const Stage& s : *list)
      if (s.name == name) return s.ms;
  return 0.0;
}

MethodTiming time_method(ForceMethod& m, int warmup, int reps) {
  // Warm-up: `warmup` evaluations, and with any warm-up at least kMinWarmupMs of them, so that a
  // kernel of a few microseconds also meets a GPU that has left its idle clocks (a handful of 20 us
  // runs did not: on a freshly started H100 the first points of a table ran up to 1.7x slower).
  const Stopwatch start;
  // (m.slowest: under MPI every rank runs as many warm-ups as the others.)
  for (int r = 0; r < warmup || (warmup > 0 && r < kMaxWarmupRuns && m.slowest(start.ms()) < kMinWarmupMs); ++r) {
    m.evaluate();
    m.wait();
  }
  std::vector<double> ms;
  std::vector<std::vector<double>> stage_ms;
  MethodTiming t;
  for (int r = 0; r < reps; ++r) {
    m.evaluate();
    const StageTimes st = m.times();
    ms.push_back(st.evaluate_ms);
    if (r == 0) {
      t.prepare = st.prepare;
      t.evaluate = st.evaluate;
      stage_ms.resize(st.evaluate.size());
    }
    for (std::size_t i = 0; i < stage_ms.size() && i < st.evaluate.size(); ++i) stage_ms[i].push_back(st.evaluate[i].ms);
  }
  t.time = summarize(ms);
  for (std::size_t i = 0; i < t.evaluate.size(); ++i) t.evaluate[i].ms = summarize(stage_ms[i]).median;
  t.counts = m.counts();
  t.warmup = warmup;
  t.reps = reps;
  return t;
}

const char* const TreeBuildTiming::kStageNames[kStages] = {"domain",    "keys",  "sort", "box_starts",
                                                            "neighbors", "dense", "total"};

TreeBuildTiming time_tree_build(const Particles& p, int level, const Domain& domain, bool given, int warmup, int reps,
                                int cpu_reps) {
  gpu::require("timing the GPU tree build");
  const DeviceParticles dp = upload_particles(p);
  // The dense arrays are built (and timed) wherever the paper's kernels could run.
  const bool dense = level <= max_dense_level(p.dim);
  GpuTreeBuilder b(p.dim, level, p.size(), dense);
  std::vector<double> stage[TreeBuildTiming::kStages];
  for (int r = 0; r < warmup + reps; ++r) {
    GpuBuildTimes tm;
    b.build(dp, given ? &domain : nullptr, &tm);
    if (r < warmup) continue;
    const double v[TreeBuildTiming::kStages] = {tm.domain,    tm.keys,  tm.sort, tm.box_starts,
                                                tm.neighbors, tm.dense, tm.total};
    for (int s = 0; s < TreeBuildTiming::kStages; ++s) stage[s].push_back(v[s]);
  }
  TreeBuildTiming t;
  for (int s = 0; s < TreeBuildTiming::kStages; ++s) t.stage[s] = summarize(stage[s]);
  t.dense = dense;
  t.bare_sort = summarize(time_bare_sort(b.tree(), warmup, reps));
  std::vector<double> cpu_ms;
  for (int r = 0; r < std::max(1, cpu_reps); ++r) {
    const Stopwatch clock;
    build_tree(p, level, domain, dense);
    cpu_ms.push_back(clock.ms());
  }
  t.cpu = summarize(cpu_ms);
  return t;
}

double estimated_cost(const KernelInfo& k, int dim, int level, double n) {
  // Typical rates measured on the project's machines (interactions/s): a GPU kernel ~1e12, the
  // OpenMP CPU kernels ~3e9, one CPU thread ~3e8. A near-field point of n particles over
  // 2^(dim level) boxes evaluates about n * 3^dim * n / nbox interactions (never more than n^2).
  const double nbox = std::ldexp(1.0, dim * level);
  const double near = std::min(n * n, n * std::pow(3.0, dim) * std::max(n / nbox, 1.0));
  const double inter = k.near_field() ? near : n * n;
  const double rate = k.gpu() ? 1e12 : k.openmp() ? 3e9 : 3e8;
  return inter / rate + 1e-3;  // + a fixed cost per point: preparing the input
}

}  // namespace nf
