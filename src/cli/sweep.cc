#include "cli/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "methods/auto_level.h"
#include "measure/benchmark.h"
#include "measure/context.h"
#include "methods/force_method.h"
#include "measure/results.h"
#include "measure/stats.h"
#include "measure/validation.h"
#include "distributed/decomposition.h"
#include "distributed/spread_method.h"

namespace nf::cli {

namespace {

using Clock = std::chrono::steady_clock;

// One input of a sweep: a file, or a generated distribution (dim, dist) at (level, n) or
// (level, ppb).
struct Point {
  InputArgs in;  // single dist and dim
  int level;
  std::int64_t n, ppb;     // -1 when not given
  bool auto_level = false;  // the level was chosen by --level auto's rule
  Particles load() const { return load_input(in, n, level, ppb); }
  std::string distribution() const { return in.input.empty() ? in.dist : in.input; }
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

// --level: a comma list of levels, each an integer or "auto" (kAutoLevel, resolved per input).
std::vector<std::int64_t> parse_levels(const SweepConfig& c) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split_list(c.levels)) {
    if (item != "auto") {
      for (std::int64_t v : parse_int_list(item, "level", 0)) out.push_back(v);
    } else if (!c.in.ppb.empty()) {
      throw UsageError("--level auto needs --input or --n: with --ppb the level defines the input");
    } else {
      out.push_back(kAutoLevel);
    }
  }
  return out;
}

std::vector<std::string> sweep_kernels(const SweepConfig& c) {
  const std::vector<int> gpus = parse_gpus(c);
  if (!c.kernels.empty() || std::none_of(gpus.begin(), gpus.end(), [](int g) { return g > 1; }))
    return parse_kernel_list(c.kernels);
  std::vector<std::string> names;
  for (const KernelInfo* k : kernels_with(kGpu | kNearField)) names.push_back(k->name);
  return names;
}

std::vector<int> parse_gpus(const SweepConfig& c) {
  std::vector<int> out;
  for (std::int64_t g : parse_int_list(c.gpus, "gpus", 1)) out.push_back(static_cast<int>(g));
  return out;
}

std::vector<CrossPairs> parse_cross_pairs_list(const SweepConfig& c) {
  std::vector<CrossPairs> out;
  for (const std::string& item : split_list(c.cross_pairs)) out.push_back(parse_cross_pairs(item));
  if (out.empty()) throw UsageError("--cross-pairs: nothing given");
  return out;
}

namespace {

// The --gpus x --cross-pairs runs of kernel k: one GPU as such; on several GPUs each listed way
// resolved for the kernel (a kernel without Newton-3 computes cross pairs twice), each way once.
std::vector<Spread> spreads(const KernelInfo& k, const std::vector<int>& gpus, const std::vector<CrossPairs>& cross) {
  std::vector<Spread> out;
  for (int g : gpus) {
    if (g == 1) {
      out.push_back({1, CrossPairs::automatic});
      continue;
    }
    for (CrossPairs c : cross) {
      const CrossPairs r = k.newton3() ? resolve_cross_pairs(k, c) : CrossPairs::twice;
      if (std::none_of(out.begin(), out.end(), [&](const Spread& s) { return s.gpus == g && s.cross == r; }))
        out.push_back({g, r});
    }
  }
  return out;
}

// --level auto: the rule's level for this input, and its line on `out`.
void resolve_auto(Point& pt, const Particles& p, const Domain& d, const std::vector<std::string>& kernels,
                  std::ostream& out) {
  std::string note;
  pt.auto_level = pt.level == kAutoLevel;
  pt.level = resolve_level(pt.level, p, d, kernels, note);
  if (!note.empty()) out << note << "\n";
}

std::vector<Point> sweep_points(const SweepConfig& c) {
  if (c.levels.empty()) throw UsageError("--level is required");
  std::vector<Point> pts;
  for (std::int64_t dim : parse_int_list(c.in.dim, "dim"))
    for (const std::string& dist : c.in.input.empty() ? split_list(c.in.dist) : std::vector<std::string>{c.in.input})
      for (std::int64_t level : parse_levels(c)) {
        InputArgs in = c.in;
        in.dim = std::to_string(dim);
        if (c.in.input.empty()) in.dist = dist;
        const int k = static_cast<int>(level);
        if (!c.in.input.empty()) {
          pts.push_back({in, k, -1, -1});
        } else if (!c.in.ppb.empty()) {
          for (std::int64_t p : parse_int_list(c.in.ppb, "ppb")) pts.push_back({in, k, -1, p});
        } else if (!c.in.n.empty()) {
          for (std::int64_t n : parse_int_list(c.in.n, "n")) pts.push_back({in, k, n, -1});
        } else {
          throw UsageError("give --input FILE, or a generated input with --n N or --ppb P");
        }
      }
  if (!c.in.input.empty() && split_list(c.in.dim).size() > 1) throw UsageError("--dim lists apply to generated inputs");
  return pts;
}

std::vector<Precision> precisions(const SweepConfig& c) {
  std::vector<Precision> out;
  std::stringstream ss(c.precisions);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(parse_precision(item));
  if (out.empty()) throw UsageError("--precision: no precision given");
  return out;
}


// Columns that identify a measurement (resume skips rows that match them all).
std::map<std::string, std::string> point_key(const SweepConfig& c, const Particles& p, const Point& pt,
                                             const std::string& kernel, Precision prec, const std::string& mask,
                                             const Spread& spread = {1, CrossPairs::automatic}) {
  std::map<std::string, std::string> k;
  k["gpus"] = std::to_string(spread.gpus);
  k["cross_pairs"] = spread.gpus > 1 ? to_string(spread.cross) : "";
  k["kernel"] = kernel;
  k["dim"] = std::to_string(p.dim);
  k["level"] = std::to_string(pt.level);
  const double nbox = std::ldexp(1.0, p.dim * pt.level);
  k["ppb"] = pt.ppb >= 0 ? std::to_string(pt.ppb) : format_double(static_cast<double>(p.size()) / nbox);
  k["n"] = std::to_string(p.size());
  k["distribution"] = pt.distribution();
  k["seed"] = c.in.input.empty() ? std::to_string(c.in.seed) : "";
  k["precision"] = to_string(prec);
  k["softening"] = format_double(c.softening);
  k["mask"] = mask;
  k["level_rule"] = pt.auto_level ? "auto" : "";  // a point at the automatic level is its own point
  return k;
}

// Progress on stderr: current point, done/total, elapsed, and an estimate of the time left that
// weights every step by its expected cost (estimated_cost), so that a sweep whose first steps
// are cheap (or dear) does not extrapolate them to the rest.
class Progress {
 public:
  Progress(std::ostream& err, std::string label, std::vector<double> costs)
      : err_(err), label_(std::move(label)), costs_(std::move(costs)) {
    for (double c : costs_) total_cost_ += c;
  }
  void step(const std::string& what) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0_).count();
    err_ << "[" << (label_.empty() ? "" : label_ + " ") << done_ + 1 << "/" << costs_.size() << "] " << what
         << "  elapsed " << fmt("%.1f", elapsed) << " s";
    if (done_ > 0 && done_cost_ > 0) err_ << ", about " << fmt("%.0f", elapsed / done_cost_ * (total_cost_ - done_cost_)) << " s left";
    err_ << std::endl;
    if (done_ < costs_.size()) done_cost_ += costs_[done_];
    ++done_;
  }

 private:
  std::ostream& err_;
  std::string label_;
  std::vector<double> costs_;
  double total_cost_ = 0, done_cost_ = 0;
  std::size_t done_ = 0;
  Clock::time_point t0_ = Clock::now();
};

// Expected costs of the steps of a sweep, in the order the sweep runs them.
std::vector<double> step_costs(const std::vector<Point>& pts, std::size_t precisions,
                               const std::vector<std::string>& kernels, const SweepConfig& c) {
  std::vector<double> costs;
  for (const Point& pt : pts) {
    const int dim = static_cast<int>(single_int(pt.in.dim, "dim"));
    const double n = pt.n >= 0 ? double(pt.n) : pt.ppb >= 0 ? pt.ppb * std::ldexp(1.0, dim * pt.level) : 1e5;
    for (std::size_t q = 0; q < precisions; ++q)
      for (const std::string& name : kernels) {
        const KernelInfo& k = find_kernel(name);
        for (const Spread& s : spreads(k, parse_gpus(c), parse_cross_pairs_list(c)))
          costs.push_back(estimated_cost(k, dim, pt.level, n) / s.gpus);
      }
  }
  return costs;
}

// The setup of one point: softening, domain, and the level (--level auto resolved for this input,
// the rule's line printed on `out`).
MethodSetup point_setup(const SweepConfig& c, Point& pt, const Particles& p, const std::vector<std::string>& kernels,
                        std::ostream& out) {
  MethodSetup s;
  s.softening = c.softening;
  s.domain = resolve_domain(p, c.domain, pt.distribution());
  resolve_auto(pt, p, *s.domain, kernels, out);
  s.level = pt.level;
  return s;
}

// Measurement columns, then the context (measure/context.h).
std::vector<std::string> with_context(std::vector<std::string> columns) {
  columns.insert(columns.end(), context_columns().begin(), context_columns().end());
  return columns;
}
const std::vector<std::string> kBenchColumns = with_context(
    {"kernel", "dim", "level", "ppb", "n", "distribution", "seed", "precision", "softening", "mask", "reps", "warmup",
     "median_ms", "min_ms", "max_ms", "interactions", "interactions_per_s", "gflops", "flops_per_interaction", "tree_ms",
     "plan_ms", "level_rule", "gpus", "cross_pairs", "comm_ms", "comm_share", "kernel_max_ms", "kernel_imbalance",
     "halo_bodies"});

const std::vector<std::string> kValidateColumns = with_context(
    {"kernel", "dim", "level", "ppb", "n", "distribution", "seed", "precision", "softening", "mask", "reference",
     "rel_l2", "max_rel", "momentum", "tolerance", "repeat", "status", "level_rule", "gpus", "cross_pairs", "one_gpu"});

std::string sci(double v) { return fmt("%.3e", v); }

int bench_tree(const SweepConfig& c, std::ostream& out, std::ostream& err) {
  gpu::require("bench --tree");
  const std::vector<Point> pts = sweep_points(c);
  std::unique_ptr<ResultsFile> file;
  if (!c.output.empty()) file = std::make_unique<ResultsFile>(c.output, kBenchColumns);
  Progress progress(err, c.label, std::vector<double>(pts.size(), 1.0));
  Table t({"N", "dim", "level", "domain_ms", "keys_ms", "sort_ms", "box_starts_ms", "neighbors_ms", "dense_ms", "total_ms",
           "total_min", "total_max", "bare_sort_ms", "total/sort", "cpu_build_ms"});
  for (Point pt : pts) {
    const Particles p = pt.load();
    const Domain dom = resolve_domain(p, c.domain, pt.distribution());
    resolve_auto(pt, p, dom, {}, out);
    progress.step("tree build, N = " + std::to_string(p.size()) + ", level " + std::to_string(pt.level));
    const TreeBuildTiming tb = time_tree_build(p, pt.level, dom, !c.domain.empty(), c.warmup, c.reps,
                                               c.cpu_reps < 0 ? 3 : c.cpu_reps);
    const TimingStats& total = tb.stage[TreeBuildTiming::kStages - 1];
    std::vector<std::string> row = {std::to_string(p.size()), std::to_string(p.dim), std::to_string(pt.level)};
    for (int s = 0; s < TreeBuildTiming::kStages - 1; ++s) row.push_back(fmt("%.4f", tb.stage[s].median));
    for (double v : {total.median, total.min, total.max, tb.bare_sort.median}) row.push_back(fmt("%.4f", v));
    row.push_back(fmt("%.2f", tb.bare_sort.median > 0 ? total.median / tb.bare_sort.median : 0.0));
    row.push_back(fmt("%.2f", tb.cpu.median));
    t.add(row);
    if (file) {
      auto add = [&](const std::string& kernel, const TimingStats& s, bool gpu_row) {
        auto r = point_key(c, p, pt, kernel, Precision::f64, "");
        auto ctx = run_context(gpu_row, c.scale);
        r.insert(ctx.begin(), ctx.end());
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
  }
  t.print(out);
  out << "times in ms, median of " << c.reps << " builds after " << c.warmup
      << " warm-up builds; bare_sort = cub::DeviceRadixSort::SortPairs of the same keys over dim*K bits\n";
  return 0;
}

}  // namespace

void add_sweep_options(po::options_description& d, SweepConfig& c, SweepMode mode) {
  const std::string gpus_help =
      std::string("GPUs of this host to spread each GPU near-field kernel over, comma list (1,2): one process drives "
                  "them, halo particles move through NCCL (README \"Several GPUs\")") +
      emulate_gpus_help();
  add_input_options(d, c.in);
  d.add_options()
      ("kernel", po::value(&c.kernels), "kernels, comma-separated (default: every kernel this machine can run)")
      ("level", po::value(&c.levels), "tree level(s) K, comma-separated, or auto (the rule of README \"Choosing the level\")")
      ("domain", po::value(&c.domain), "x0,y0[,z0],side (default: smallest square/cube from the positions)")
      ("softening", po::value(&c.softening)->default_value(c.softening), "softening length eps >= 0")
      ("precision", po::value(&c.precisions)->default_value(c.precisions), "float, double, or float,double")
      ("output", po::value(&c.output), "results CSV to append rows to (created with a header)")
      ("resume", po::bool_switch(&c.resume), "skip points whose rows are already in --output")
      ("remeasure", po::bool_switch(&c.remeasure), "measure points already in --output again and replace their rows")
      ("gpus", po::value(&c.gpus)->default_value(c.gpus),
       gpus_help.c_str())
      ("cross-pairs", po::value(&c.cross_pairs)->default_value(c.cross_pairs),
       "on several GPUs, pairs across two GPUs' parts: once (Newton-3 kernels: computed on one side, counterforces "
       "sent back), twice (computed on both sides), auto (once for Newton-3 kernels that are not deterministic); comma "
       "list");
  if (mode != SweepMode::bench)
    d.add_options()("cpu-reference-limit", po::value(&c.cpu_reference_limit)->default_value(c.cpu_reference_limit),
                    "largest N whose ground truth is cpu-allpairs (above: allpairs-tiled on the GPU)");
  if (mode != SweepMode::validate)
    d.add_options()
        ("mask", po::value(&c.mask)->default_value(c.mask), "all-pairs kernels: all or near")
        ("reps", po::value(&c.reps)->default_value(c.reps), "timed runs per point (median, min, max reported)")
        ("warmup", po::value(&c.warmup)->default_value(c.warmup), "untimed runs first (with any, they go on for at least 50 ms)")
        ("cpu-reps", po::value(&c.cpu_reps)->default_value(c.cpu_reps), "timed runs of CPU kernels (-1: --reps)")
        ("cpu-warmup", po::value(&c.cpu_warmup)->default_value(c.cpu_warmup), "warm-up runs of CPU kernels (-1: --warmup)")
        ("tree", po::bool_switch(&c.tree), "time the GPU tree build (stages + a bare CUB sort) instead of kernels");
}

int run_bench(const SweepConfig& c, std::ostream& out, std::ostream& err) {
  if (c.reps < 1 || c.warmup < 0) throw UsageError("--reps must be at least 1 and --warmup at least 0");
  if (c.tree) return bench_tree(c, out, err);
  const std::vector<Point> pts = sweep_points(c);
  const std::vector<std::string> kernels = sweep_kernels(c);
  const std::vector<Precision> precs = precisions(c);
  const Mask mask = parse_mask(c.mask);
  std::unique_ptr<ResultsFile> file;
  if (!c.output.empty()) file = std::make_unique<ResultsFile>(c.output, kBenchColumns);
  const std::vector<int> gpus = parse_gpus(c);
  const std::vector<CrossPairs> cross = parse_cross_pairs_list(c);
  Progress progress(err, c.label, step_costs(pts, precs.size(), kernels, c));
  const bool multi = std::any_of(gpus.begin(), gpus.end(), [](int g) { return g > 1; });

  std::vector<std::string> header = {"kernel", "precision", "level", "N", "P", "median_ms", "min_ms", "max_ms",
                                     "interactions/s", "GFLOP/s", "tree_ms", "plan_ms"};
  if (multi)
    for (const char* h : {"gpus", "cross", "comm_ms", "comm%", "kernel_max_ms", "imbalance"}) header.push_back(h);
  Table t(header);
  for (Point pt : pts) {
    const Particles p = pt.load();
    MethodSetup s = point_setup(c, pt, p, kernels, out);
    s.mask = mask;
    // Useful near-field interactions, counted once from the CPU tree of this input.
    std::uint64_t near = 0;
    bool near_known = false;
    for (Precision prec : precs)
      for (const std::string& name : kernels)
        for (const Spread& spread : spreads(find_kernel(name), gpus, cross)) {
          const KernelInfo& k = find_kernel(name);
          const std::string mask_name = k.near_field() ? "" : to_string(mask);
          auto key = point_key(c, p, pt, name, prec, mask_name, spread);
          const auto point = key;
          progress.step(name + " " + to_string(prec) + " level " + std::to_string(pt.level) + " N " +
                        std::to_string(p.size()) + (pt.ppb >= 0 ? " P " + std::to_string(pt.ppb) : "") +
                        (spread.gpus > 1 ? " on " + std::to_string(spread.gpus) + " GPUs" : ""));
          if (c.resume && !c.remeasure && file && file->contains(key)) {
            err << "  already in " << file->path() << ", skipped\n";
            continue;
          }
          if (k.near_field() && !near_known) {
            // From the box counts alone (parallel, no sort): the same number the tree gives.
            near = near_field_interactions(count_boxes(p, pt.level, *s.domain));
            near_known = true;
          }
          s.precision = prec;
          const int warmup = !k.gpu() && c.cpu_warmup >= 0 ? c.cpu_warmup : c.warmup;
          const int reps = !k.gpu() && c.cpu_reps >= 0 ? c.cpu_reps : c.reps;
          const auto method = make_spread_method(k, s, p, spread);
          method->prepare(p);
          const MethodTiming m = time_method(*method, warmup, reps);
          const std::uint64_t interactions = credited_interactions(k, p.size(), near);
          const Rates r = rates(interactions, m.time.median, p.dim);
          const double tree_ms = m.stage("tree"), plan_ms = m.stage("plan"), comm_ms = m.stage("comm");
          const double kernel_max = m.stage("kernel_max"), kernel_mean = m.stage("kernel_mean");
          const double comm_share = m.time.median > 0 ? comm_ms / m.time.median : 0.0;
          const double imbalance = kernel_mean > 0 ? kernel_max / kernel_mean : 1.0;
          std::uint64_t halo = 0;
          for (const Count& n : m.counts)
            if (n.name == "halo_bodies") halo = n.value;
          std::vector<std::string> row = {name, to_string(prec), std::to_string(pt.level), std::to_string(p.size()),
                                          key["ppb"], fmt("%.4f", m.time.median), fmt("%.4f", m.time.min),
                                          fmt("%.4f", m.time.max), sci(r.interactions_per_s), fmt("%.1f", r.gflops),
                                          k.near_field() ? fmt("%.3f", tree_ms) : "-",
                                          plan_ms > 0 ? fmt("%.3f", plan_ms) : "-"};
          if (multi) {
            row.push_back(std::to_string(spread.gpus));
            const bool split = spread.gpus > 1;
            row.push_back(split ? to_string(spread.cross) : "-");
            row.push_back(split ? fmt("%.3f", comm_ms) : "-");
            row.push_back(split ? fmt("%.1f", 100 * comm_share) : "-");
            row.push_back(split ? fmt("%.3f", kernel_max) : "-");
            row.push_back(split ? fmt("%.3f", imbalance) : "-");
          }
          t.add(row);
          if (file) {
            auto ctx = run_context(k, c.scale);
            key.insert(ctx.begin(), ctx.end());
            key["reps"] = std::to_string(reps);
            key["warmup"] = std::to_string(warmup);
            key["median_ms"] = format_double(m.time.median);
            key["min_ms"] = format_double(m.time.min);
            key["max_ms"] = format_double(m.time.max);
            key["interactions"] = std::to_string(interactions);
            key["interactions_per_s"] = format_double(r.interactions_per_s);
            key["gflops"] = format_double(r.gflops);
            key["flops_per_interaction"] = std::to_string(r.flops_per_interaction);
            key["tree_ms"] = k.near_field() ? format_double(tree_ms) : "";
            key["plan_ms"] = plan_ms > 0 ? format_double(plan_ms) : "";
            if (spread.gpus > 1) {
              key["comm_ms"] = format_double(comm_ms);
              key["comm_share"] = format_double(comm_share);
              key["kernel_max_ms"] = format_double(kernel_max);
              key["kernel_imbalance"] = format_double(imbalance);
              key["halo_bodies"] = std::to_string(halo);
            }
            if (c.remeasure)
              file->replace(point, key);
            else
              file->append(key);
          }
      }
  }
  t.print(out);
  out << "time of one force evaluation (tree build excluded, shown as tree_ms; a kernel's plan, built once per "
         "tree, as plan_ms); interactions/s counts directed "
         "i<-j evaluations (a Newton-3 pair counts twice; all-pairs kernels N^2); GFLOP/s at "
      << "20 flops per 3D and 15 per 2D interaction\n";
  if (multi)
    out << "on several GPUs the time spans every GPU from GPU 0's start to the last GPU's end; comm_ms is the part "
           "outside the slowest GPU's kernel (halo exchange, counterforces, packing, waiting at them), comm% its "
           "share; imbalance = slowest / mean kernel time\n";
  return 0;
}

int run_validate(const SweepConfig& c, std::ostream& out, std::ostream& err) {
  const std::vector<Point> pts = sweep_points(c);
  const std::vector<std::string> kernels = sweep_kernels(c);
  const std::vector<Precision> precs = precisions(c);
  std::unique_ptr<ResultsFile> file;
  if (!c.output.empty()) file = std::make_unique<ResultsFile>(c.output, kValidateColumns);
  const std::vector<int> gpus = parse_gpus(c);
  const std::vector<CrossPairs> cross = parse_cross_pairs_list(c);
  const bool multi = std::any_of(gpus.begin(), gpus.end(), [](int g) { return g > 1; });
  Progress progress(err, c.label, step_costs(pts, precs.size(), kernels, c));
  std::vector<std::string> header = {"kernel", "precision", "level", "N", "rel_l2", "max_rel", "momentum", "tolerance",
                                     "repeat", "status"};
  if (multi)
    for (const char* h : {"gpus", "cross", "vs 1 GPU"}) header.insert(header.end() - 1, h);
  Table t(header);
  bool all_pass = true;
  std::vector<std::string> references;
  for (Point pt : pts) {
    const Particles p = pt.load();
    MethodSetup s = point_setup(c, pt, p, kernels, out);
    for (Precision prec : precs) {
      std::string ref_name;
      std::vector<double> ref;
      bool have_ref = false;
      for (const std::string& name : kernels)
        for (const Spread& spread : spreads(find_kernel(name), gpus, cross)) {
          const KernelInfo& k = find_kernel(name);
          auto key = point_key(c, p, pt, name, prec, k.near_field() ? "" : "near", spread);
          const auto point = key;
          progress.step("validate " + name + " " + to_string(prec) + " level " + std::to_string(pt.level) + " N " +
                        std::to_string(p.size()) +
                        (spread.gpus > 1 ? " on " + std::to_string(spread.gpus) + " GPUs" : ""));
          if (c.resume && !c.remeasure && file && file->contains(key)) {
            err << "  already in " << file->path() << ", skipped\n";
            continue;
          }
          if (!have_ref) {
            ref = ground_truth(p, s, prec, c.cpu_reference_limit, ref_name);
            have_ref = true;
            references.push_back(to_string(prec) + std::string(" kernels, ") + pt.distribution() + " " +
                                 std::to_string(p.dim) + "D, level " + std::to_string(pt.level) + ", N = " +
                                 std::to_string(p.size()) + ": " + ref_name);
          }
          s.precision = prec;
          s.mask = k.near_field() ? Mask::all : Mask::near;
          const auto method = make_spread_method(k, s, p, spread);
          method->prepare(p);
          std::vector<double> got;
          KernelCheck check = check_method(*method, k, p, ref, &got);
          if (spread.gpus > 1 && matches_one_gpu_bitwise(k, spread.cross)) {
            const auto one = make_method(k, s, p);  // one GPU must give the same bits
            one->prepare(p);
            one->evaluate();
            check.one_gpu_checked = true;
            check.one_gpu_equal = bitwise_equal(got, one->accelerations());
            check.pass = check.pass && check.one_gpu_equal;
          }
          const Metrics& m = check.metrics;
          const bool ok = check.pass;
          all_pass = all_pass && ok;
          const std::string repeat = !check.repeat_checked ? "-" : check.repeatable ? "bitwise" : "DIFFERS";
          const std::string one_gpu = !check.one_gpu_checked ? "-" : check.one_gpu_equal ? "bitwise" : "DIFFERS";
          std::vector<std::string> row = {name, to_string(prec), std::to_string(pt.level), std::to_string(p.size()),
                                          sci(m.rel_l2), sci(m.max_rel), sci(m.momentum), sci(tolerance(prec)), repeat};
          if (multi) {
            row.push_back(std::to_string(spread.gpus));
            row.push_back(spread.gpus > 1 ? to_string(spread.cross) : "-");
            row.push_back(one_gpu);
          }
          row.push_back(ok ? "PASS" : "FAIL");
          t.add(row);
          if (file) {
            auto ctx = run_context(k, c.scale);
            key.insert(ctx.begin(), ctx.end());
            key["reference"] = ref_name;
            key["rel_l2"] = format_double(m.rel_l2);
            key["max_rel"] = format_double(m.max_rel);
            key["momentum"] = format_double(m.momentum);
            key["tolerance"] = format_double(tolerance(prec));
            key["repeat"] = repeat;
            key["one_gpu"] = one_gpu == "-" ? "" : one_gpu;
            key["status"] = ok ? "PASS" : "FAIL";
            if (c.remeasure)
              file->replace(point, key);
            else
              file->append(key);
          }
      }
    }
  }
  t.print(out);
  for (const std::string& r : references) out << "reference for " << r << "\n";
  if (multi)
    out << "vs 1 GPU: a deterministic kernel computing cross pairs twice must give the one-GPU output bit for bit "
           "(bitwise); others are held to the tolerance only\n";
  out << (all_pass ? "all kernels PASS" : "some kernels FAIL") << "\n";
  return all_pass ? 0 : 1;
}

}  // namespace nf::cli
