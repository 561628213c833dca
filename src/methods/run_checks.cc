#include "methods/run_checks.h"

#include <omp.h>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "methods/auto_level.h"
#include "methods/memory_estimate.h"
#include "tree/tree.h"

namespace nf {

void check_kernels_runnable(const std::vector<std::string>& kernels) {
  if (gpu::available()) return;
  std::vector<std::string> gpu_kernels;
  for (const std::string& name : kernels)
    if (find_kernel(name).gpu()) gpu_kernels.push_back(name);
  if (gpu_kernels.empty()) return;
  std::string names;
  for (const std::string& n : gpu_kernels) names += (names.empty() ? "" : ", ") + n;
  throw UsageError((gpu_kernels.size() == 1 ? "GPU kernel " + names + " needs" : "GPU kernels " + names + " need") +
                   " a CUDA GPU: " + gpu::unavailable_reason() +
                   "; nothing was run (the CPU kernels are listed by nearfield bench --list)");
}

void check_run_memory(const KernelInfo& k, const MethodSetup& s, int dim, std::uint64_t n, double input_bytes,
                      bool reference, int gpus) {
  // A level past the tree's limits is refused in its own words (the method's checks) first.
  if ((k.uses_tree() || s.mask == Mask::near) && s.level != kAutoLevel)
    check_level(dim, s.level, n, ~0ull, "memory", k.uses_tree() && k.dense_tree());
  MemoryNeed need;
  if (input_bytes > 0) need.host.push_back({"particles", input_bytes});
  add_method_memory(need, k, s, dim, n, omp_get_max_threads(), gpus);
  if (reference) add_reference_memory(need, dim, n);
  check_memory(need, k.name + " on " + std::to_string(n) + " particles (" + std::to_string(dim) + "D, " +
                         to_string(s.precision) + ")");
}

}  // namespace nf
