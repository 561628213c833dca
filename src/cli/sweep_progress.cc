// The sweep's progress meter (cli/sweep_progress.h).
#include "cli/sweep_progress.h"

#include "cli/commands.h"

namespace nf::cli {

SweepProgress::SweepProgress(std::ostream& err, std::string label, std::vector<double> costs)
    : err_(err), label_(std::move(label)), costs_(std::move(costs)) {
  for (double c : costs_) total_cost_ += c;
}

void SweepProgress::step(const std::string& what) {
  const double elapsed = clock_.seconds();
  err_ << "[" << (label_.empty() ? "" : label_ + " ") << done_ + 1 << "/" << costs_.size() << "] " << what
       << "  elapsed " << fmt("%.1f", elapsed) << " s";
  if (done_ > 0 && done_cost_ > 0)
    err_ << ", about " << fmt("%.0f", elapsed / done_cost_ * (total_cost_ - done_cost_)) << " s left";
  err_ << std::endl;
  if (done_ < costs_.size()) done_cost_ += costs_[done_];
  ++done_;
}

}  // namespace nf::cli
