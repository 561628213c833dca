// The sweep's progress lines (cli/sweep_progress.h).
#include "cli/sweep_progress.h"

#include <cmath>

#include "cli/commands.h"
#include "core/numbers.h"

namespace nf::cli {

SweepProgress::SweepProgress(std::ostream& err, std::string label, std::vector<double> costs)
    : meter_(err, std::move(costs), 0.0, [label = std::move(label)](const ProgressLine& l) {
        std::string s = "[" + (label.empty() ? "" : label + " ") + std::to_string(l.done + 1) + "/" +
                        std::to_string(l.total) + "] " + l.what + "  elapsed " + format_number("%.1f", l.elapsed_s) + " s";
        if (l.done > 0 && !std::isnan(l.left_s)) s += ", about " + format_number("%.0f", l.left_s) + " s left";
        return s;
      }) {}

}  // namespace nf::cli
