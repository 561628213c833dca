// The progress meter of long jobs (core/progress.h).
#include "core/progress.h"

#include <cmath>
#include <limits>

#include "core/numbers.h"

namespace nf {

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "unknown";
  const long s = std::lround(seconds);
  if (s >= 3600) return std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) + " min";
  if (s >= 60) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  return format_number("%.1f s", seconds);
}

Progress::Progress(std::ostream& out, std::vector<double> weights, double interval_s, Format format)
    : out_(out), weights_(std::move(weights)), units_(weights_.size()), interval_s_(interval_s), format_(std::move(format)) {
  for (double w : weights_) total_weight_ += w;
}

Progress::Progress(std::ostream& out, std::size_t units, double interval_s, Format format)
    : out_(out), units_(units), interval_s_(interval_s), format_(std::move(format)) {
  total_weight_ = double(units);
}

void Progress::complete(std::size_t units) {
  for (; units > 0; --units, ++done_) done_weight_ += weight(done_);
}

void Progress::skip(std::size_t units) {
  for (; units > 0; --units, ++done_) total_weight_ -= weight(done_);
}

bool Progress::report(const std::string& what) {
  if (done_ < units_ && since_line_.seconds() < interval_s_) return false;
  since_line_.restart();
  out_ << format_(line(what)) << "\n";
  out_.flush();
  return true;
}

void Progress::restart() {
  clock_.restart();
  since_line_.restart();
}

ProgressLine Progress::line(const std::string& what) const {
  ProgressLine l;
  l.done = done_;
  l.total = units_;
  l.elapsed_s = clock_.seconds();
  l.left_s = done_weight_ > 0 ? l.elapsed_s / done_weight_ * (total_weight_ - done_weight_)
                              : std::numeric_limits<double>::quiet_NaN();
  l.what = what;
  return l;
}

}  // namespace nf
