// nearfield model: the paper's Table I/II operation counts at one level and P.
#include <cstdint>

#include "cli/commands.h"
#include "tree/box_rule.h"
#include "core/errors.h"
#include "measure/model.h"

namespace nf::cli {

int cmd_model(const Args& args, std::ostream& out, std::ostream&) {
  int level = 7, dim = 2;
  std::int64_t ppb = 1;
  po::options_description d("model options");
  d.add_options()("help", "this help")("level", po::value(&level)->required(), "tree level K")(
      "ppb", po::value(&ppb)->required(), "particles per box P")("dim", po::value(&dim)->default_value(dim), "2 or 3");
  po::variables_map vm;
  if (!parse_args(args, d, vm, out, "usage: nearfield model --level K --ppb P [--dim D]")) return 0;
  if (dim != 2 && dim != 3) throw UsageError("--dim must be 2 or 3");
  // The paper's accounting is over the dense layout (every box and its links).
  if (level < 0 || level > max_dense_level(dim))
    throw UsageError("--level must lie in [0, " + std::to_string(max_dense_level(dim)) + "]");
  if (ppb < 1) throw UsageError("--ppb must be at least 1");
  // N = boxes x P, within the particles every command takes (the counts had wrapped past 2^64).
  const std::uint64_t boxes = std::uint64_t(1) << (dim * level), most = 0xffffffffull / boxes;
  if (static_cast<std::uint64_t>(ppb) > most)
    throw UsageError("--ppb " + std::to_string(ppb) + " at level " + std::to_string(level) + " (" +
                     std::to_string(boxes) + " boxes) passes the 2^32 - 1 particles nearfield takes: at most " +
                     std::to_string(most) + " a box there");
  out << model_report(operation_model(dim, level, static_cast<std::uint64_t>(ppb)));
  return 0;
}

}  // namespace nf::cli
