#include "cli/sweep_checks.h"

#include "cli/sweep.h"

#include "io/output_file.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "methods/force_method.h"
#include "distributed/spread_method.h"

namespace nf::cli {

void check_sweep(const SweepConfig& c) {
  check_input_args(c.in);
  if (c.levels.empty()) throw UsageError("--level is required");
  parse_levels(c);
  parse_sample(c);
  if (c.tree) {
    gpu::require("bench --tree");
  } else {
    const std::vector<std::string> kernels = sweep_kernels(c);
    check_kernels_runnable(kernels);
    // Several GPUs: only GPU near-field kernels, on a machine (and build) that has them and NCCL.
    parse_cross_pairs_list(c);
    for (int g : parse_gpus(c))
      for (const std::string& name : kernels) check_gpus(find_kernel(name), g);
  }
  if (c.output.empty()) return;
  check_output_path(c.output);
  if ((c.resume || c.remeasure) && resolve_output(c.output).kind == OutputKind::stream)
    throw UsageError(std::string(c.remeasure ? "--remeasure" : "--resume") + " reads the rows of the results file; " +
                     c.output + " is not a file (its rows can only be written as they come)");
}

}  // namespace nf::cli
