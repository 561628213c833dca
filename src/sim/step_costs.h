#pragma once
//! What the steps of a simulation cost (docs/design.md §12): each step's parts (forces, tree,
//! plan, transfers, integration), the cost line a run ends with, and --timing's results row.

#include <cstddef>
#include <ostream>
#include <vector>

#include "methods/force_method.h"
#include "sim/run_config.h"

namespace nf::sim {

//! What one step cost, milliseconds.
struct StepCost {
  double forces = 0, tree = 0, plan = 0, transfer = 0, integrate = 0, wall = 0;
};

//! A step's cost: its wall time, the integration's time (kicks and drift) and the method's stages
//! of that step (StageTimes: the evaluation, tree, plan, transfer).
StepCost step_cost(double wall_ms, double integrate_ms, const StageTimes& t);

//! What the steps of a run cost, and its outputs.
struct RunCosts {
  std::vector<StepCost> steps;
  std::vector<double> diagnostics_ms;  //!< each energy row (its particles fetched, potential, force error)
  std::vector<double> output_ms;       //!< each output step's files (snapshot, energy.csv, frame)
};

//! "cost of a step (median of N, ms): ..." on `log` (nothing when no step was run).
void log_costs(const RunCosts& costs, std::ostream& log);

//! --timing's checks before any step: a results file of another command (a column missing) is
//! refused (InputError) and an unwritable folder too, as write_timing_row would at the end.
void check_timing_file(const std::string& path);

//! --timing: appends the step-cost breakdown (median/min/max of each part, diagnostics, the share
//! beyond the forces) as a results row to c.timing_csv and says so on `log`; with no step run,
//! only says that no row was written.
void write_timing_row(const SimulationConfig& c, const KernelInfo& k, int dim, std::size_t n, int level,
                      const RunCosts& costs, std::ostream& log);

}  // namespace nf::sim
