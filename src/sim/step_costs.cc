// What the steps of a simulation cost: the cost line and --timing's row (sim/step_costs.h,
// docs/design.md §12).
#include "sim/step_costs.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "core/numbers.h"
#include "distributed/process_group.h"
#include "measure/context.h"
#include "measure/results.h"
#include "measure/stats.h"
#include "methods/registry.h"

namespace nf::sim {

StepCost step_cost(double wall_ms, double integrate_ms, const StageTimes& t) {
  StepCost cost;
  cost.integrate = integrate_ms;
  cost.wall = wall_ms;
  cost.forces = t.evaluate_ms;
  cost.tree = t.get("tree");
  cost.plan = t.get("plan") + t.get("lists");  // what a method derives from its tree: a plan, a full method's lists
  cost.transfer = t.get("transfer");
  return cost;
}

void log_costs(const RunCosts& costs, std::ostream& log) {
  if (costs.steps.empty()) return;
  std::vector<double> wall, forces, tree, integrate, transfer, beyond;
  for (const StepCost& s : costs.steps) {
    wall.push_back(s.wall);
    forces.push_back(s.forces);
    tree.push_back(s.tree + s.plan);
    transfer.push_back(s.transfer);
    integrate.push_back(s.integrate);
    beyond.push_back((s.wall - s.forces) / s.wall);
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "cost of a step (median of %zu, ms): %.4g in all, forces %.4g, tree + plan %.4g, bodies in/out %.4g, "
                "integration %.4g; beyond the forces %.1f%% of the step",
                costs.steps.size(), summarize(wall).median, summarize(forces).median, summarize(tree).median,
                summarize(transfer).median, summarize(integrate).median, 100.0 * summarize(beyond).median);
  log << line;
  if (!costs.diagnostics_ms.empty())
    log << "; diagnostics " << format_double(summarize(costs.diagnostics_ms).median) << " ms each";
  log << "\n";
}

namespace {

const std::vector<std::string>& timing_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {"kernel", "dim",       "level", "ppb", "n", "input", "precision", "softening",
                                  "dt",     "subsample", "gpus",  "processes", "steps"};
    for (const char* part : {"step", "forces", "tree", "plan", "transfer", "integrate", "other"})
      for (const char* stat : {"median_ms", "min_ms", "max_ms"}) c.push_back(std::string(part) + "_" + stat);
    for (const char* col : {"diagnostics_count", "diagnostics_median_ms", "diagnostics_min_ms", "diagnostics_max_ms",
                            "output_median_ms", "beyond_forces_fraction", "beyond_forces_with_diagnostics_fraction"})
      c.push_back(col);
    for (const std::string& col : context_columns()) c.push_back(col);
    return c;
  }();
  return columns;
}

}  // namespace

void check_timing_file(const std::string& path) { ResultsFile file(path, timing_columns()); }

void write_timing_row(const SimulationConfig& c, const KernelInfo& k, int dim, std::size_t n, int level,
                      const RunCosts& costs, std::ostream& log) {
  if (costs.steps.empty()) {
    log << "timing: no step was run, so no row was written to " << c.timing_csv << "\n";
    return;
  }
  ResultsFile file(c.timing_csv, timing_columns());

  std::map<std::string, std::string> row = run_context(k, "");
  const double boxes = std::pow(2.0, double(dim * level));
  row["kernel"] = k.name;
  row["dim"] = std::to_string(dim);
  row["level"] = c.level.empty() ? "" : std::to_string(level);
  row["ppb"] = c.level.empty() ? "" : format_double(double(n) / boxes);
  row["n"] = std::to_string(n);
  row["input"] = csv_field(c.input);
  row["precision"] = to_string(c.precision);
  row["softening"] = format_double(c.softening);
  row["dt"] = format_double(c.dt);
  row["subsample"] = std::to_string(c.subsample);
  row["gpus"] = std::to_string(c.gpus);
  row["processes"] = std::to_string(process_count());  // nearfield-mpi: the ranks the forces were spread over
  row["steps"] = std::to_string(costs.steps.size());
  auto put = [&](const std::string& part, const std::vector<double>& ms) {
    const TimingStats t = summarize(ms);
    row[part + "_median_ms"] = format_double(t.median);
    row[part + "_min_ms"] = format_double(t.min);
    row[part + "_max_ms"] = format_double(t.max);
  };
  std::vector<double> step, forces, tree, plan, transfer, integrate, other, beyond;
  double sum_step = 0, sum_forces = 0;
  for (const StepCost& s : costs.steps) {
    step.push_back(s.wall);
    forces.push_back(s.forces);
    tree.push_back(s.tree);
    plan.push_back(s.plan);
    transfer.push_back(s.transfer);
    integrate.push_back(s.integrate);
    other.push_back(s.wall - s.forces - s.tree - s.plan - s.transfer - s.integrate);
    beyond.push_back((s.wall - s.forces) / s.wall);
    sum_step += s.wall;
    sum_forces += s.forces;
  }
  put("step", step);
  put("forces", forces);
  put("tree", tree);
  put("plan", plan);
  put("transfer", transfer);
  put("integrate", integrate);
  put("other", other);
  const std::vector<double>& diagnostics_ms = costs.diagnostics_ms;
  row["diagnostics_count"] = std::to_string(diagnostics_ms.size());
  if (!diagnostics_ms.empty()) {
    const TimingStats d = summarize(diagnostics_ms);
    row["diagnostics_median_ms"] = format_double(d.median);
    row["diagnostics_min_ms"] = format_double(d.min);
    row["diagnostics_max_ms"] = format_double(d.max);
  }
  if (!costs.output_ms.empty()) row["output_median_ms"] = format_double(summarize(costs.output_ms).median);
  const TimingStats b = summarize(beyond);
  double diag_total = 0;
  for (double d : diagnostics_ms) diag_total += d;
  row["beyond_forces_fraction"] = format_double(b.median);
  row["beyond_forces_with_diagnostics_fraction"] =
      format_double((sum_step - sum_forces + diag_total) / (sum_step + diag_total));
  file.append(row);
  log << "timing: a row for " << costs.steps.size() << " steps appended to " << c.timing_csv << "\n";
}

}  // namespace nf::sim
