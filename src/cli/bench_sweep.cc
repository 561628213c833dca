// `bench` over a sweep (docs/design.md §7): times one cell (point, precision, kernel, spread) as
// the engine of cli/sweep_engine.h asks, and prints the table and its notes.
#include "cli/bench_sweep.h"

#include <cstdint>
#include <optional>

#include "cli/sweep_engine.h"
#include "methods/adaptive_method.h"
#include "measure/order_search.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "measure/benchmark.h"
#include "tree/box_set.h"

namespace nf::cli {

const std::vector<std::string>& bench_columns() {
  static const std::vector<std::string> columns = with_context(
      {"kernel", "dim", "level", "ppb", "n", "distribution", "seed", "precision", "softening", "mask", "reps", "warmup",
       "median_ms", "min_ms", "max_ms", "interactions", "interactions_per_s", "gflops", "flops_per_interaction",
       "tree_ms", "plan_ms", "level_rule", "gpus", "processes", "cross_pairs", "comm_ms", "comm_share", "kernel_max_ms",
       "kernel_imbalance", "halo_bodies", "order", "accuracy", "p", "near_kernel", "lists_ms", "upward_ms", "m2l_ms",
       "downward_ms", "near_ms", "upward_madds", "m2l_translations", "m2l_madds", "downward_madds", "near_pairs",
       "leaf_size", "leaf_rule", "domain", "generator", "order_sample", "order_search_ms"});
  return columns;
}

namespace {

std::string sci(double v) { return format_number("%.3e", v); }

// Times one cell: warm-up and timed runs of its method (measure/benchmark.h), the rates at the
// interactions credited to the kernel.
class BenchTask : public SweepTask {
 public:
  BenchTask(const SweepConfig& c, Mask mask, bool multi) : c_(c), mask_(mask), multi_(multi) {}

  std::string mask(const KernelInfo& k) const override { return k.uses_tree() ? "" : to_string(mask_); }
  std::string progress_line(const SweepCell& cell) const override { return cell_summary(cell, true); }

  std::vector<std::string> recorded_row(const SweepCell& cell, const ResultsRow& row) override {
    const KernelInfo& k = cell.kernel;
    std::vector<std::string> t = {recorded_label(k, row), to_string(cell.precision),
                                  std::to_string(cell.at.point.level), std::to_string(cell.at.particles.size()),
                                  cell.key.at("ppb"), recorded_value(row, "median_ms", "%.4f"),
                                  recorded_value(row, "min_ms", "%.4f"), recorded_value(row, "max_ms", "%.4f"),
                                  recorded_value(row, "interactions_per_s", "%.3e"), recorded_value(row, "gflops", "%.1f"),
                                  recorded_value(row, "tree_ms", "%.3f"), recorded_value(row, "plan_ms", "%.3f")};
    if (multi_) {
      const bool split = cell.spread.gpus > 1;
      t.push_back(std::to_string(cell.spread.gpus));
      t.push_back(split ? std::string(to_string(cell.spread.cross)) : "-");
      t.push_back(recorded_value(row, "comm_ms", "%.3f"));
      t.push_back(split ? recorded_value(row, "comm_share", "%.3f") : "-");  // a share: shown as recorded
      t.push_back(recorded_value(row, "kernel_max_ms", "%.3f"));
      t.push_back(recorded_value(row, "kernel_imbalance", "%.3f"));
    }
    return t;
  }

  CellResult measure(const SweepCell& cell) override {
    const KernelInfo& k = cell.kernel;
    const Particles& p = cell.at.particles;
    const Spread& spread = cell.spread;
    if (k.near_field() && near_point_ != cell.point_index) {
      // Useful near-field interactions, counted once per point from the box counts alone
      // (parallel, no sort): the same number the tree gives.
      near_ = near_field_interactions(count_boxes(p, cell.at.point.level, *cell.at.setup.domain));
      near_point_ = cell.point_index;
    }
    MethodSetup s = cell.setup(c_);
    if (!k.far_field()) s.mask = mask_;
    const int warmup = !k.gpu() && c_.cpu_warmup >= 0 ? c_.cpu_warmup : c_.warmup;
    const int reps = !k.gpu() && c_.cpu_reps >= 0 ? c_.cpu_reps : c_.reps;
    const auto method = make_spread_method(k, s, p, spread);
    method->prepare(p);
    const MethodTiming m = time_method(*method, warmup, reps);
    const std::uint64_t interactions = credited_interactions(k, p.size(), near_);
    const Rates r = rates(interactions, m.time.median, p.dim);
    const double tree_ms = m.stage("tree"), plan_ms = m.stage("plan"), comm_ms = m.stage("comm");
    const double kernel_max = m.stage("kernel_max"), kernel_mean = m.stage("kernel_mean");
    const double comm_share = m.time.median > 0 ? comm_ms / m.time.median : 0.0;
    const double imbalance = kernel_mean > 0 ? kernel_max / kernel_mean : 1.0;
    std::uint64_t halo = 0;
    for (const Count& n : m.counts)
      if (n.name == "halo_bodies") halo = n.value;

    CellResult out;
    out.table_row = {kernel_label(k, *method), to_string(cell.precision), std::to_string(cell.at.point.level), std::to_string(p.size()),
                     cell.key.at("ppb"), format_number("%.4f", m.time.median), format_number("%.4f", m.time.min),
                     format_number("%.4f", m.time.max), sci(r.interactions_per_s), format_number("%.1f", r.gflops),
                     k.uses_tree() ? format_number("%.3f", tree_ms) : "-", plan_ms > 0 ? format_number("%.3f", plan_ms) : "-"};
    if (multi_) {
      const bool split = spread.gpus > 1;
      for (const std::string& v : {std::to_string(spread.gpus), split ? std::string(to_string(spread.cross)) : "-",
                                   split ? format_number("%.3f", comm_ms) : "-", split ? format_number("%.1f", 100 * comm_share) : "-",
                                   split ? format_number("%.3f", kernel_max) : "-", split ? format_number("%.3f", imbalance) : "-"})
        out.table_row.push_back(v);
    }
    ResultsRow& row = out.columns;
    row["reps"] = std::to_string(reps);
    row["warmup"] = std::to_string(warmup);
    row["median_ms"] = format_double(m.time.median);
    row["min_ms"] = format_double(m.time.min);
    row["max_ms"] = format_double(m.time.max);
    row["interactions"] = std::to_string(interactions);
    row["interactions_per_s"] = format_double(r.interactions_per_s);
    row["gflops"] = format_double(r.gflops);
    row["flops_per_interaction"] = std::to_string(r.flops_per_interaction);
    row["tree_ms"] = k.uses_tree() ? format_double(tree_ms) : "";
    if (k.far_field()) {
      row["p"] = std::to_string(method->setup().order);
      row["near_kernel"] = method->near_kernel();
      if (k.adaptive()) row["leaf_size"] = std::to_string(leaf_size(method->setup()));
      if (const OrderSearch* o = method->order_search()) {
        row["order_search_ms"] = format_double(o->ms);
        out.note = o->describe(k.name);
      }
      for (const char* stage : {"lists", "upward", "m2l", "downward", "near"})
        row[std::string(stage) + "_ms"] = format_double(m.stage(stage));
      // The stages' operation counts (farfield/op_counts.h: multiply-adds, translations, pairs).
      for (const Count& n : m.counts) row[n.name] = std::to_string(n.value);
    }
    row["plan_ms"] = plan_ms > 0 ? format_double(plan_ms) : "";
    if (spread.gpus > 1) {
      row["comm_ms"] = format_double(comm_ms);
      row["comm_share"] = format_double(comm_share);
      row["kernel_max_ms"] = format_double(kernel_max);
      row["kernel_imbalance"] = format_double(imbalance);
      row["halo_bodies"] = std::to_string(halo);
    }
    return out;
  }

 private:
  const SweepConfig& c_;
  Mask mask_;
  bool multi_;
  std::uint64_t near_ = 0;                 // the near-field interactions of point near_point_
  std::optional<std::size_t> near_point_;  // unset until a near-field kernel is measured
};

}  // namespace

int run_bench(const SweepConfig& c, std::ostream& out, std::ostream& err) {
  if (c.reps < 1 || c.warmup < 0) throw UsageError("--reps must be at least 1 and --warmup at least 0");
  // -1 takes --reps / --warmup; 0 timed runs had written a row of zeros, other negatives ran as -1.
  if (c.cpu_reps == 0 || c.cpu_reps < -1)
    throw UsageError("--cpu-reps: " + std::to_string(c.cpu_reps) + " is not a valid value (at least 1, or -1: --reps)");
  if (c.cpu_warmup < -1)
    throw UsageError("--cpu-warmup: " + std::to_string(c.cpu_warmup) +
                     " is not a valid value (at least 0, or -1: --warmup)");
  if (c.tree) return bench_tree(c, out, err);
  Sweep sweep(c);
  BenchTask task(c, parse_mask(c.mask), sweep.multi_gpu());
  std::vector<std::string> header = {"kernel", "precision", "level", "N", "P", "median_ms", "min_ms", "max_ms",
                                     "interactions/s", "GFLOP/s", "tree_ms", "plan_ms"};
  if (sweep.multi_gpu())
    for (const char* h : {"gpus", "cross", "comm_ms", "comm%", "kernel_max_ms", "imbalance"}) header.push_back(h);
  sweep.run(task, header, bench_columns(), out, err).print(out);
  out << sweep.recorded_note();
  out << "time of one force evaluation (tree build excluded, shown as tree_ms; a kernel's plan, built once per "
         "tree, as plan_ms); interactions/s counts directed "
         "i<-j evaluations (a Newton-3 pair counts twice; all-pairs kernels N^2); GFLOP/s at "
      << "20 flops per 3D and 15 per 2D interaction\n";
  if (sweep.multi_gpu())
    out << "on several GPUs the time spans every GPU from GPU 0's start to the last GPU's end; comm_ms is the part "
           "outside the slowest GPU's kernel (halo exchange, counterforces, packing, waiting at them), comm% its "
           "share; imbalance = slowest / mean kernel time\n";
  return 0;
}

}  // namespace nf::cli
