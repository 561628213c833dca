#pragma once
//! The sweep's progress lines (core/progress.h's meter in the sweep's format): one line on stderr
//! per step, with an estimate of the time left.

#include <ostream>
#include <string>
#include <vector>

#include "core/progress.h"

namespace nf::cli {

//! "[LABEL i/n] WHAT  elapsed E s, about L s left", every step weighted by its expected cost
//! (measure/benchmark.h's estimated_cost), so that a sweep whose first steps are cheap (or dear)
//! does not extrapolate them to the rest.
class SweepProgress {
 public:
  //! `label` prefixes every line (an experiment's name; may be empty); `costs` are the steps'
  //! expected costs in the order they run (only their ratios matter). The clock starts here.
  SweepProgress(std::ostream& err, std::string label, std::vector<double> costs);
  //! Prints the line of the next step, described by `what`, and counts it.
  void step(const std::string& what) {
    meter_.report(what);
    meter_.complete();
  }
  //! Prints the line of the next step, which needs no work (`what` says why), and counts it as
  //! skipped: its expected cost leaves the estimate.
  void skip(const std::string& what) {
    meter_.report(what);
    meter_.skip();
  }

 private:
  Progress meter_;
};

}  // namespace nf::cli
