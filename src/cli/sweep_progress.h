#pragma once
//! The sweep's progress meter (until src/core/progress.h serves the simulation and the sweep
//! alike): one line on stderr per step, with an estimate of the time left.

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "core/timing.h"

namespace nf::cli {

//! Progress on a stream: the current step, done/total, elapsed, and an estimate of the time left
//! that weights every step by its expected cost (measure/benchmark.h's estimated_cost), so that a
//! sweep whose first steps are cheap (or dear) does not extrapolate them to the rest.
class SweepProgress {
 public:
  //! `label` prefixes every line (an experiment's name; may be empty); `costs` are the steps'
  //! expected costs in the order they run (only their ratios matter). The clock starts here.
  SweepProgress(std::ostream& err, std::string label, std::vector<double> costs);
  //! Prints the line of the next step, described by `what`.
  void step(const std::string& what);

 private:
  std::ostream& err_;
  std::string label_;
  std::vector<double> costs_;
  double total_cost_ = 0, done_cost_ = 0;
  std::size_t done_ = 0;
  Stopwatch clock_;
};

}  // namespace nf::cli
