#include "measure/benchmark.h"

#include <chrono>
#include <cmath>
#include <cstring>

#include "tree/box_rule.h"
#include "physics/interaction.h"
#include "distributed/multi_gpu.h"
#include "tree/tree_gpu.h"

namespace nf {

std::uint64_t credited_interactions(const KernelInfo& k, std::size_t n, std::uint64_t near_field) {
  // All-pairs kernels evaluate N^2 pairs (i = j included, contributing zero), masked or not.
  return k.near_field() ? near_field : std::uint64_t(n) * n;
}

KernelTiming time_kernel(const KernelInfo& k, const Particles& p, const ForceSetup& s, int warmup, int reps,
                         std::uint64_t near_field) {
  auto e = prepare(k, p, s);
  // Warm-up: `warmup` runs, and with any warm-up at least kMinWarmupMs of them, so that a kernel
  // of a few microseconds also meets a GPU that has left its idle clocks (a handful of 20 us runs
  // did not: on a freshly started H100 the first points of a table ran up to 1.7x slower).
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  for (int r = 0; r < warmup || (warmup > 0 && r < kMaxWarmupRuns && elapsed_ms() < kMinWarmupMs); ++r) e->run();
  std::vector<double> ms, comm, share, kernel, imbalance;
  for (int r = 0; r < reps; ++r) {
    ms.push_back(e->run_timed_ms());
    const MultiGpuSpan& sp = e->span;
    comm.push_back(sp.comm_ms);
    share.push_back(ms.back() > 0 ? sp.comm_ms / ms.back() : 0.0);
    kernel.push_back(sp.kernel_max_ms);
    imbalance.push_back(sp.kernel_mean_ms > 0 ? sp.kernel_max_ms / sp.kernel_mean_ms : 1.0);
  }
  KernelTiming t;
  t.time = summarize(ms);
  if (s.gpus > 1) {
    t.gpus = s.gpus;
    t.comm_ms = summarize(comm).median;
    t.comm_share = summarize(share).median;
    t.kernel_max_ms = summarize(kernel).median;
    t.kernel_imbalance = summarize(imbalance).median;
    t.halo_bodies = e->span.halo_bodies;
  }
  t.warmup = warmup;
  t.reps = reps;
  t.interactions = credited_interactions(k, p.size(), near_field);
  t.flops_per_interaction = p.dim == 3 ? SoftenedGravity<3, float>::flops : SoftenedGravity<2, float>::flops;
  t.interactions_per_s = t.time.median > 0 ? t.interactions / (t.time.median * 1e-3) : 0.0;
  t.gflops = t.interactions_per_s * t.flops_per_interaction * 1e-9;
  t.tree_ms = k.near_field() ? e->tree_ms : 0.0;
  t.plan_ms = e->plan_ms;
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
    const auto t0 = std::chrono::steady_clock::now();
    build_tree(p, level, domain, dense);
    cpu_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  t.cpu = summarize(cpu_ms);
  return t;
}

KernelCheck validate_kernel(const KernelInfo& k, const Particles& p, const ForceSetup& s,
                            const std::vector<double>& reference) {
  auto e = prepare(k, p, s);
  e->poison_output();
  e->run();
  const std::vector<double> a = e->accelerations();
  KernelCheck c;
  c.metrics = compare(a, reference, masses_as_seen(p, s.precision), p.dim);
  if (k.deterministic()) {
    e->poison_output();
    e->run();
    const std::vector<double> again = e->accelerations();
    c.repeat_checked = true;
    c.repeatable = again.size() == a.size() && (a.empty() || std::memcmp(a.data(), again.data(), a.size() * sizeof(double)) == 0);
  }
  if (s.gpus > 1 && matches_one_gpu_bitwise(k, s.cross_pairs)) {
    ForceSetup one = s;
    one.gpus = 1;
    auto e1 = prepare(k, p, one);
    e1->poison_output();
    e1->run();
    const std::vector<double> b = e1->accelerations();
    c.one_gpu_checked = true;
    c.one_gpu_equal =
        b.size() == a.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
  }
  c.pass = passes(c.metrics, s.precision) && c.repeatable && c.one_gpu_equal;
  return c;
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
