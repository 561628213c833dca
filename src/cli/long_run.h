#pragma once
//! Long CPU force evaluations (docs/design.md §5): `forces` estimates the time of a CPU kernel's
//! evaluation from its interaction count and a conservative rate before it starts; above
//! kLongRunSeconds it prints the estimate and then progress lines until the evaluation ends.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>

#include "core/particles.h"
#include "core/progress.h"
#include "methods/force_method.h"
#include "methods/registry.h"

namespace nf::cli {

//! An evaluation estimated to take longer than this says so first and reports progress.
constexpr double kLongRunSeconds = 10;
//! Seconds between progress lines of a long evaluation.
constexpr double kLongRunInterval = 10;

//! What an evaluation will cost: interactions, at a rate, on some threads.
struct RunEstimate {
  double interactions = 0;  //!< pair evaluations (cpu-allpairs: N^2, --mask near included: it tests every pair)
  double rate = 0;          //!< interactions per second, conservative (see estimate_cpu_run)
  int threads = 1;
  double seconds() const { return interactions / rate; }
};

//! The estimate for CPU kernel k at setup s (level and domain resolved) on p; none for GPU
//! kernels and full methods (their stages have a cost model of their own).
std::optional<RunEstimate> estimate_cpu_run(const KernelInfo& k, const MethodSetup& s, const Particles& p);

//! One long evaluation, from construction to destruction: prints the estimate, then every
//! kLongRunInterval seconds a progress line. A method that reports its progress (the setup's
//! `progress` callback, set to progress()) gets the fraction done and the time left measured
//! from it; others get the time elapsed against the estimate.
class LongRun {
 public:
  //! `what`: the evaluation ("cpu-allpairs on 8388608 particles"); `hint`: added to the estimate line.
  LongRun(std::ostream& err, std::string what, const RunEstimate& e, const std::string& hint = "");
  ~LongRun();
  LongRun(const LongRun&) = delete;
  LongRun& operator=(const LongRun&) = delete;
  //! The callback for MethodSetup::progress (called with the fraction done, between pieces of work).
  std::function<void(double)> progress();

 private:
  void heartbeat();
  std::ostream& err_;
  std::string what_;
  double estimate_s_;
  Progress meter_;                      // units of 1/1000 of the evaluation, for methods that report
  std::atomic<bool> reported_{false};   // a method reported progress: the heartbeat stays quiet
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  Stopwatch clock_;
  std::thread thread_;
};

}  // namespace nf::cli
