#pragma once
//! A progress meter for long jobs (a simulation's steps, a sweep's points): units of work done of
//! a total, each weighted by its expected cost, the time elapsed and an estimate of the time left,
//! written as lines the caller formats, at most one every so many seconds.

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/timing.h"

namespace nf {

//! "1 h 2 min", "2 min 5 s", "12.3 s"; "unknown" for a time that is negative or not finite.
std::string duration_text(double seconds);

//! Where a job stands when a progress line is written (what the caller's formatter sees).
struct ProgressLine {
  std::size_t done = 0;   //!< units complete
  std::size_t total = 0;  //!< units in all
  double elapsed_s = 0;   //!< seconds since the meter started (or restarted)
  //! Seconds left, estimated as elapsed / (weight done) * (weight left); NaN while no weight is done.
  double left_s = 0;
  std::string what;  //!< the text given to report() (for example the unit that starts now)
  //! Every unit is complete.
  bool finished() const { return done >= total; }
};

//! Counts completed units and writes progress lines: format(line), a newline and a flush, at most
//! one every interval_s seconds (every report when 0) and always once every unit is done.
//! A job that reports after each unit calls complete() then report(); one that reports the unit
//! it starts calls report(what) then complete().
class Progress {
 public:
  //! The caller's line, from where the job stands.
  using Format = std::function<std::string(const ProgressLine&)>;
  //! One unit per weight (a unit's expected cost in any unit: only ratios matter). The clock starts now.
  Progress(std::ostream& out, std::vector<double> weights, double interval_s, Format format);
  //! `units` units of equal weight.
  Progress(std::ostream& out, std::size_t units, double interval_s, Format format);
  //! The next `units` units are complete (units past the total count with weight 0).
  void complete(std::size_t units = 1);
  //! The next `units` units need no work (a sweep's point already measured): they count as done,
  //! and their weight leaves the estimate, so that what is left is not extrapolated from them.
  void skip(std::size_t units = 1);
  //! Writes a line when interval_s has passed since the last one (or the start), or when every
  //! unit is done; returns whether it wrote.
  bool report(const std::string& what = "");
  //! Starts the clock again: the time before (a job's setup) leaves the estimate.
  void restart();
  //! Where the job stands now.
  ProgressLine line(const std::string& what = "") const;

 private:
  // Unit i's weight: weights_[i], or 1 where the units are of equal weight (weights_ empty: a
  // simulation of 10^12 steps had allocated 8 bytes a step for its meter).
  double weight(std::size_t i) const { return i >= units_ ? 0.0 : weights_.empty() ? 1.0 : weights_[i]; }

  std::ostream& out_;
  std::vector<double> weights_;
  std::size_t units_ = 0;
  double interval_s_;
  Format format_;
  double total_weight_ = 0, done_weight_ = 0;
  std::size_t done_ = 0;
  Stopwatch clock_, since_line_;
};

}  // namespace nf
