// Long CPU force evaluations: the estimate and the progress lines (cli/long_run.h).
#include "cli/long_run.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "cli/commands.h"
#include "core/numbers.h"
#include "tree/box_set.h"

namespace nf::cli {

namespace {

// Interactions per second of one thread, set low on purpose, so that an estimate that errs says
// "longer": measured on a 2-core AMD EPYC VM shared with builds (2D float, uniform), cpu-serial and
// cpu-n3 2-4e8 credited interactions/s (2D level 6, P = 512: 3.9e8), cpu-allpairs (float64)
// 1.3e8 pairs/s per thread, 4.4e8 with --mask near (most pairs only tested). OpenMP kernels: these
// rates times 0.75 per thread.
constexpr double kNearFieldRate = 2e8;
constexpr double kAllPairsRate = 1e8;
constexpr double kOpenMpEfficiency = 0.75;

}  // namespace

std::optional<RunEstimate> estimate_cpu_run(const KernelInfo& k, const MethodSetup& s, const Particles& p) {
  if (k.gpu() || k.far_field()) return std::nullopt;
  RunEstimate e;
  const double n = static_cast<double>(p.size());
  if (k.near_field()) {
    e.interactions = static_cast<double>(near_field_interactions(count_boxes(p, s.level, *s.domain)));
    e.rate = kNearFieldRate;
  } else {
    e.interactions = n * n;  // --mask near tests every pair too, but evaluates few: measured 3.5x faster
    e.rate = s.mask == Mask::near ? 3 * kAllPairsRate : kAllPairsRate;
  }
  if (k.openmp()) {
    e.threads = omp_get_max_threads();
    e.rate *= e.threads > 1 ? kOpenMpEfficiency * e.threads : 1.0;
  }
  return e;
}

LongRun::LongRun(std::ostream& err, std::string what, const RunEstimate& e, const std::string& hint)
    : err_(err), what_(std::move(what)), estimate_s_(e.seconds()),
      meter_(err, 1000, kLongRunInterval, [this](const ProgressLine& l) {
        return "  " + what_ + ": " + format_number("%.1f", l.done / 10.0) + "% done, elapsed " + duration_text(l.elapsed_s) +
               (l.finished() ? "" : ", about " + duration_text(l.left_s) + " left");
      }) {
  err_ << what_ << ": " << format_number("%.3g", e.interactions) << " interactions at about " << format_number("%.2g", e.rate) << "/s ("
       << e.threads << " thread" << (e.threads > 1 ? "s" : "") << ", a conservative rate): about "
       << duration_text(estimate_s_) << "; progress every " << format_number("%.0f", kLongRunInterval) << " s" << hint << "\n"
       << std::flush;
  thread_ = std::thread([this] { heartbeat(); });
}

LongRun::~LongRun() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  done_cv_.notify_all();
  thread_.join();
}

std::function<void(double)> LongRun::progress() {
  return [this](double fraction) {
    std::lock_guard<std::mutex> lock(mutex_);
    reported_ = true;
    const auto target = static_cast<std::size_t>(std::floor(std::clamp(fraction, 0.0, 1.0) * 1000));
    const ProgressLine now = meter_.line();
    if (target > now.done) meter_.complete(target - now.done);
    meter_.report();
  };
}

// For methods that do not report: the time elapsed against the estimate.
void LongRun::heartbeat() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto interval = std::chrono::duration<double>(kLongRunInterval);
  while (!done_cv_.wait_for(lock, interval, [this] { return done_; }))
    if (!reported_)
      err_ << "  " << what_ << ": running, elapsed " << duration_text(clock_.seconds()) << " (estimate about "
           << duration_text(estimate_s_) << ")\n"
           << std::flush;
}

}  // namespace nf::cli
