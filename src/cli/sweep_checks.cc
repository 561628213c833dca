#include "cli/sweep_checks.h"

#include "cli/sweep.h"

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/gpu_runtime.h"
#include "harness/evaluation.h"

namespace nf::cli {

void check_sweep(const SweepConfig& c) {
  check_input_args(c.in);
  if (c.levels.empty()) throw UsageError("--level is required");
  parse_levels(c);
  if (c.tree)
    gpu::require("bench --tree");
  else
    check_kernels_runnable(parse_kernel_list(c.kernels));
  if (!c.output.empty()) check_output_path(c.output);
}

}  // namespace nf::cli
