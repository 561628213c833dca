#pragma once
//! Summaries of repeated timings: median with min and max (never a single run's number).

#include <vector>

namespace nf {

struct TimingStats {
  double median = 0, min = 0, max = 0;
  int reps = 0;
};

//! Median (mean of the middle two for an even count), min and max of `ms`.
TimingStats summarize(std::vector<double> ms);

}  // namespace nf
