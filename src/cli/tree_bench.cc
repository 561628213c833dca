// `bench --tree` (docs/design.md §7): the GPU tree build of every point of a sweep, stage by stage,
// against a bare CUB sort of the same keys and the CPU build.
#include <memory>

#include "cli/bench_sweep.h"
#include "cli/sweep_engine.h"
#include "cli/sweep_progress.h"
#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "measure/benchmark.h"
#include "measure/context.h"
#include "measure/results.h"

namespace nf::cli {

int bench_tree(const SweepConfig& c, std::ostream& out, std::ostream& err) {
  gpu::require("bench --tree");
  const std::vector<SweepPoint> pts = sweep_points(c);
  std::unique_ptr<ResultsFile> file;
  if (!c.output.empty()) file = std::make_unique<ResultsFile>(c.output, bench_columns());
  SweepProgress progress(err, c.label, std::vector<double>(pts.size(), 1.0));
  Table t({"N", "dim", "level", "domain_ms", "keys_ms", "sort_ms", "box_starts_ms", "neighbors_ms", "dense_ms", "total_ms",
           "total_min", "total_max", "bare_sort_ms", "total/sort", "cpu_build_ms"});
  for (const SweepPoint& pt : pts) {
    const LoadedPoint at = load_point(c, pt, {}, out);
    const Particles& p = at.particles;
    const int level = at.point.level;
    progress.step("tree build, N = " + std::to_string(p.size()) + ", level " + std::to_string(level));
    const TreeBuildTiming tb = time_tree_build(p, level, *at.setup.domain, !c.domain.empty(), c.warmup, c.reps,
                                               c.cpu_reps < 0 ? 3 : c.cpu_reps);
    const TimingStats& total = tb.stage[TreeBuildTiming::kStages - 1];
    std::vector<std::string> row = {std::to_string(p.size()), std::to_string(p.dim), std::to_string(level)};
    for (int s = 0; s < TreeBuildTiming::kStages - 1; ++s) row.push_back(format_number("%.4f", tb.stage[s].median));
    for (double v : {total.median, total.min, total.max, tb.bare_sort.median}) row.push_back(format_number("%.4f", v));
    row.push_back(format_number("%.2f", tb.bare_sort.median > 0 ? total.median / tb.bare_sort.median : 0.0));
    row.push_back(format_number("%.2f", tb.cpu.median));
    t.add(row);
    if (!file) continue;
    auto add = [&](const std::string& kernel, const TimingStats& s, bool gpu_row) {
      ResultsRow r = point_key(c, at, kernel, Precision::f64, "");
      const ResultsRow context = run_context(gpu_row, c.scale);
      r.insert(context.begin(), context.end());
      r["reps"] = std::to_string(s.reps);
      r["warmup"] = std::to_string(gpu_row ? c.warmup : 0);
      r["median_ms"] = format_double(s.median);
      r["min_ms"] = format_double(s.min);
      r["max_ms"] = format_double(s.max);
      file->append(r);
    };
    // With --domain the GPU skips the reduction: such rows are named apart.
    const std::string prefix = c.domain.empty() ? "tree-gpu:" : "tree-gpu-domain-given:";
    for (int s = 0; s < TreeBuildTiming::kStages; ++s) add(prefix + TreeBuildTiming::kStageNames[s], tb.stage[s], true);
    add(prefix + "bare-sort", tb.bare_sort, true);
    add("tree-cpu:total", tb.cpu, false);
  }
  t.print(out);
  out << "times in ms, median of " << c.reps << " builds after " << c.warmup
      << " warm-up builds; bare_sort = cub::DeviceRadixSort::SortPairs of the same keys over dim*K bits\n";
  return 0;
}

}  // namespace nf::cli
