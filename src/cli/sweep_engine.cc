// The sweep engine (cli/sweep_engine.h): points, cells, loading, progress, resume and remeasure.
#include "cli/sweep_engine.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "cli/sweep_checks.h"
#include "cli/sweep_progress.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "distributed/process_group.h"
#include "measure/benchmark.h"
#include "measure/context.h"
#include "measure/results.h"
#include "methods/auto_level.h"
#include "methods/full_method.h"

namespace nf::cli {

namespace {

// The --gpus x --cross-pairs runs of kernel k: one GPU in one process as such; on several GPUs or
// over several processes (nearfield-mpi: the parts are the ranks) each listed way resolved for the
// kernel (a kernel without Newton-3 computes cross pairs twice), each way once.
std::vector<Spread> spreads(const KernelInfo& k, const std::vector<int>& gpus, const std::vector<CrossPairs>& cross) {
  std::vector<Spread> out;
  for (int g : gpus) {
    if (g == 1 && process_count() == 1) {
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

}  // namespace

std::vector<SweepPoint> sweep_points(const SweepConfig& c) {
  if (c.levels.empty()) throw UsageError("--level is required");
  std::vector<SweepPoint> pts;
  for (std::int64_t dim : parse_int_list(c.in.dim, "dim"))
    for (const std::string& dist : c.in.input.empty() ? split_list(c.in.dist, "dist") : std::vector<std::string>{c.in.input})
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

LoadedPoint load_point(const SweepConfig& c, SweepPoint pt, const std::vector<std::string>& kernels,
                       std::ostream& out) {
  LoadedPoint at{pt, load_input(pt.in, pt.n, pt.level, pt.ppb), {}};
  // A file's dimension and particle count (the model's sparse factor), now known.
  if (!c.in.input.empty()) check_sweep_accuracy(c, at.particles.dim, at.particles.size());
  MethodSetup& s = at.setup;
  s.softening = c.softening;
  s.domain = resolve_domain(at.particles, c.domain, pt.distribution());
  std::string note;
  at.point.auto_level = pt.level == kAutoLevel;
  // The near-field rule chooses for the kernels that are not full methods; a full method at
  // --level auto has a level of its own per cell (Sweep::run), so with only full methods the
  // point's level stays kAutoLevel, never used.
  // Near-field kernels get a level each in Sweep::run too; the point's level is for the rest.
  const bool only_full = !kernels.empty() && std::all_of(kernels.begin(), kernels.end(), [](const std::string& k) {
    const KernelInfo& info = find_kernel(k);
    return info.far_field() || info.uses_tree();
  });
  at.point.level = only_full ? pt.level : resolve_level(pt.level, at.particles, *s.domain, kernels, note);
  if (!note.empty()) out << note << "\n";
  s.level = at.point.level;
  return at;
}

ResultsRow point_key(const SweepConfig& c, const LoadedPoint& at, const std::string& kernel, Precision precision,
                     const std::string& mask, const Spread& spread, int order) {
  const Particles& p = at.particles;
  const SweepPoint& pt = at.point;
  ResultsRow k;
  k["gpus"] = std::to_string(spread.gpus);
  k["processes"] = std::to_string(process_count());  // nearfield-mpi's ranks (1 without MPI)
  k["cross_pairs"] = spread.gpus > 1 || process_count() > 1 ? to_string(spread.cross) : "";
  k["kernel"] = kernel;
  k["dim"] = std::to_string(p.dim);
  k["level"] = std::to_string(pt.level);
  const double nbox = std::ldexp(1.0, p.dim * pt.level);
  k["ppb"] = pt.ppb >= 0 ? std::to_string(pt.ppb) : format_double(static_cast<double>(p.size()) / nbox);
  k["n"] = std::to_string(p.size());
  k["distribution"] = pt.distribution();
  // The seed of a generated input; with --sample also of a file's (it draws the targets).
  k["seed"] = c.in.input.empty() || sampled(c, p.size()) ? std::to_string(c.in.seed) : "";
  k["precision"] = to_string(precision);
  k["softening"] = format_double(c.softening);
  k["mask"] = mask;
  k["level_rule"] = pt.auto_level ? "auto" : "";  // a point at the automatic level is its own point
  // Full methods: the order as asked (auto: from the accuracy) and the accuracy asked for.
  k["order"] = order < 0 ? "" : order == 0 ? "auto" : std::to_string(order);
  k["accuracy"] = order < 0 || c.accuracy <= 0 ? "" : format_double(c.accuracy);
  // --order-sample M: the order measured on the input at M targets (measure/order_search.h).
  k["order_sample"] = order == 0 && c.order_sample > 0 ? std::to_string(c.order_sample) : "";
  // validate --sample M: a sample is its own measurement; M >= N validates every particle, the
  // same measurement as without --sample (empty).
  k["sample"] = sampled(c, p.size()) ? std::to_string(parse_sample(c)) : "";
  // Adaptive full methods: a given leaf size is part of the point; without one the method takes the
  // automatic size (methods/full_level_rule.h), which its row records, and the point is the rule's.
  if (order >= 0 && find_kernel(kernel).adaptive()) {
    k["leaf_rule"] = c.leaf_size == 0 ? "auto" : "";
    if (c.leaf_size != 0) k["leaf_size"] = std::to_string(c.leaf_size);
  }
  // What else sets the measurement, so that --resume never takes a row measured otherwise for this
  // point (a --domain, other threads, another near kernel or generator had been "already in" the
  // file). Defaults are empty, as in rows written before these columns existed.
  k["domain"] = c.domain;
  std::string generator;
  if (c.in.input.empty()) {
    if (c.in.mass != "equal") generator += "mass=" + c.in.mass;
    if (pt.distribution() == "clusters" && c.in.clusters != InputArgs().clusters)
      generator += (generator.empty() ? "" : ";") + std::string("clusters=") + std::to_string(c.in.clusters);
    if (pt.distribution() == "lattice" && c.in.jitter != 0.0)
      generator += (generator.empty() ? "" : ";") + std::string("jitter=") + format_double(c.in.jitter);
  }
  k["generator"] = generator;
  const KernelInfo& info = find_kernel(kernel);
  if (!info.gpu()) k["threads"] = std::to_string(kernel_threads(info));
  if (info.far_field() && !info.adaptive()) {
    MethodSetup s;
    s.near = c.near;
    k["near_kernel"] = full_near_kernel(info, s);  // what the row records (the method's near_kernel())
  }
  return k;
}

std::vector<std::string> with_context(std::vector<std::string> columns) {
  columns.insert(columns.end(), context_columns().begin(), context_columns().end());
  return columns;
}

std::string kernel_label(const KernelInfo& k, const ForceMethod& m) {
  return k.far_field() ? k.name + " p" + std::to_string(m.setup().order) : k.name;
}

MethodSetup SweepCell::setup(const SweepConfig& c) const {
  MethodSetup s = at.setup;
  s.precision = precision;
  if (kernel.far_field()) {
    s.order = order;
    s.accuracy = c.accuracy;
    s.near = c.near;
    if (kernel.adaptive()) s.leaf_size = c.leaf_size;
    if (order == 0) s.order_sample = c.order_sample;
  }
  return s;
}

std::string recorded_value(const ResultsRow& row, const std::string& column, const char* format) {
  const auto it = row.find(column);
  if (it == row.end() || it->second.empty()) return "-";
  try {
    return format_number(format, std::stod(it->second));
  } catch (const std::exception&) {
    return "-";
  }
}

std::string recorded_label(const KernelInfo& k, const ResultsRow& row) {
  const auto p = row.find("p");
  return k.name + (k.far_field() && p != row.end() && !p->second.empty() ? " p" + p->second : "") + "*";
}

std::string Sweep::recorded_note() const {
  if (recorded_ == 0) return "";
  return "*: " + std::to_string(recorded_) + " row" + (recorded_ > 1 ? "s" : "") + " measured earlier, read from " +
         c_.output + " (skipped now; --remeasure measures them again)\n";
}

std::string cell_summary(const SweepCell& cell, bool with_ppb) {
  const SweepPoint& pt = cell.at.point;
  return cell.kernel.name + " " + to_string(cell.precision) + " " + std::to_string(cell.at.particles.dim) + "D " +
         pt.distribution() + " level " + std::to_string(pt.level) + " N " +
         std::to_string(cell.at.particles.size()) + (with_ppb && pt.ppb >= 0 ? " P " + std::to_string(pt.ppb) : "") +
         (cell.spread.gpus > 1 ? " on " + std::to_string(cell.spread.gpus) + " GPUs" : "") +
         (cell.order > 0 ? " order " + std::to_string(cell.order) : "");
}

Sweep::Sweep(const SweepConfig& c) : c_(c) {
  points_ = sweep_points(c);
  kernels_ = sweep_kernels(c);
  const std::vector<Precision> precisions = parse_precisions(c);
  const std::vector<int> gpus = parse_gpus(c);
  const std::vector<CrossPairs> cross = parse_cross_pairs_list(c);
  multi_gpu_ = std::any_of(gpus.begin(), gpus.end(), [](int g) { return g > 1; });
  for (std::size_t q = 0; q < precisions.size(); ++q)
    for (const std::string& name : kernels_) {
      const KernelInfo& k = find_kernel(name);
      for (const Spread& spread : spreads(k, gpus, cross))
        if (k.far_field())
          for (int order : parse_orders(c)) cells_.push_back({q, precisions[q], &k, spread, order});
        else
          cells_.push_back({q, precisions[q], &k, spread, -1});
    }
}

// Expected costs of the steps, in the order the sweep runs them (the level as given: auto
// counts as kAutoLevel here, before the particles are known).
std::vector<double> Sweep::costs() const {
  std::vector<double> costs;
  for (const SweepPoint& pt : points_) {
    const int dim = static_cast<int>(single_int(pt.in.dim, "dim"));
    const double n = pt.n >= 0 ? double(pt.n) : pt.ppb >= 0 ? pt.ppb * std::ldexp(1.0, dim * pt.level) : 1e5;
    for (const Cell& cell : cells_) costs.push_back(estimated_cost(*cell.kernel, dim, pt.level, n) / cell.spread.gpus);
  }
  return costs;
}

Table Sweep::run(SweepTask& task, std::vector<std::string> header, const std::vector<std::string>& columns,
                 std::ostream& out, std::ostream& err) {
  std::unique_ptr<ResultsFile> file;
  if (!c_.output.empty()) file = std::make_unique<ResultsFile>(c_.output, columns);
  SweepProgress progress(err, c_.label, costs());
  Table t(std::move(header));
  for (std::size_t i = 0; i < points_.size(); ++i) {
    LoadedPoint at = load_point(c_, points_[i], kernels_, out);
    const int near_level = at.point.level;
    AutoLevels full_levels(at.particles, *at.setup.domain);
    for (const Cell& cell : cells_) {
      const KernelInfo& k = *cell.kernel;
      // The cell's level: the point's, or a full method's own at --level auto (its order,
      // precision and near kernel weigh in: methods/full_level_rule.h), chosen and printed once.
      int level = near_level;
      if (at.point.auto_level && !k.far_field() && k.uses_tree()) {
        std::string note;  // each near-field kernel its own level (methods/level_costs.h)
        level = full_levels.near(k, note);
        if (!note.empty()) out << note << "\n";
      } else if (at.point.auto_level && k.far_field()) {
        const ResultsRow unkeyed;
        const SweepCell probe{i, at, cell.precision_index, cell.precision, k, cell.spread, cell.order, unkeyed};
        std::string note;
        level = full_levels.full(k, probe.setup(c_), note);
        if (!note.empty()) out << note << "\n";
      }
      at.point.level = at.setup.level = level;
      const ResultsRow key = point_key(c_, at, k.name, cell.precision, task.mask(k), cell.spread, cell.order);
      const SweepCell sc{i, at, cell.precision_index, cell.precision, k, cell.spread, cell.order, key};
      if (c_.resume && !c_.remeasure && file && file->contains(key)) {
        progress.skip(task.progress_line(sc) + ": already in " + file->path() + ", skipped");
        t.add(task.recorded_row(sc, file->find(key)));
        ++recorded_;
        continue;
      }
      progress.step(task.progress_line(sc));
      // A file's particles are known only now: the cell's memory is checked before it allocates.
      check_run_memory(k, sc.setup(c_), at.particles.dim, at.particles.size(), 0.0, false, cell.spread.gpus);
      CellResult result = task.measure(sc);
      if (!result.note.empty()) out << result.note << "\n";
      t.add(std::move(result.table_row));
      if (!file) continue;
      ResultsRow row = key;
      const ResultsRow context = run_context(k, c_.scale);
      row.insert(context.begin(), context.end());
      for (const auto& [column, value] : result.columns) row[column] = value;
      if (c_.remeasure)
        file->replace(key, row);
      else
        file->append(row);
    }
  }
  return t;
}

}  // namespace nf::cli
