#include "cli/sweep_checks.h"

#include <algorithm>

#include "cli/sweep.h"
#include "cli/sweep_engine.h"

#include "io/output_file.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "farfield/order.h"
#include "methods/force_method.h"
#include "distributed/process_group.h"
#include "distributed/spread_method.h"

namespace nf::cli {

namespace {

// Every generated point with each kernel, precision, order and GPU count, before the first point
// is made (a point of the sweep at the largest N would otherwise fail after hours of the others).
void check_sweep_memory(const SweepConfig& c, bool validation) {
  if (!c.in.input.empty() || c.tree) return;
  const std::vector<std::string> kernels = sweep_kernels(c);
  for (const SweepPoint& pt : sweep_points(c)) {
    const GenerateOptions g = generator_options(pt.in, pt.n, pt.level, pt.ppb);
    check_generate_options(g);  // a lattice's N, galaxies in 2D, ...: before the first point, not at this one
    const auto n = static_cast<std::uint64_t>(generated_count(g));
    // The accuracy with this point's particles (the model's sparse factor, farfield/order.h).
    check_sweep_accuracy(c, g.dim, n, {pt.level});
    for (const std::string& name : kernels) {
      const KernelInfo& k = find_kernel(name);
      for (Precision precision : parse_precisions(c))
        for (int order : k.far_field() ? parse_orders(c) : std::vector<int>{0})
          for (int gpus : k.gpu() ? parse_gpus(c) : std::vector<int>{1}) {
            MethodSetup s;
            s.level = pt.level;
            s.precision = precision;
            s.mask = validation || c.mask == "near" ? Mask::near : Mask::all;
            if (k.far_field()) s.order = order, s.accuracy = c.accuracy, s.near = c.near;
            if (k.adaptive()) s.leaf_size = c.leaf_size;
            check_run_memory(k, s, g.dim, n, generated_bytes(g), validation, gpus);
          }
    }
  }
}

}  // namespace

void check_sweep_accuracy(const SweepConfig& c, int dim, std::uint64_t particles, std::vector<int> levels) {
  const std::vector<std::string> kernels = sweep_kernels(c);
  if (std::none_of(kernels.begin(), kernels.end(), [](const std::string& k) { return find_kernel(k).far_field(); }))
    return;
  const std::vector<int> orders = parse_orders(c);
  if (std::find(orders.begin(), orders.end(), 0) == orders.end()) return;  // every order given
  const double accuracy = c.accuracy > 0 ? c.accuracy : farfield::kDefaultAccuracy;
  for (const std::string& name : kernels) {
    const KernelInfo& k = find_kernel(name);
    if (!k.far_field()) continue;
    if (levels.empty())
      for (std::int64_t level : parse_levels(c)) levels.push_back(int(level));
    for (int level : levels) check_accuracy_reachable(dim, level, accuracy, k.adaptive(), particles);
  }
}

void check_sweep(const SweepConfig& c, bool validation) {
  check_input_args(c.in);
  if (c.levels.empty()) throw UsageError("--level is required");
  parse_levels(c);
  parse_sample(c);
  if (!c.tree && c.in.input.empty())
    for (std::int64_t dim : parse_int_list(c.in.dim, "dim")) check_sweep_accuracy(c, int(dim), 0);
  if (c.tree) {
    gpu::require(c.label.empty() ? "bench --tree" : "experiment " + c.label + " (mode = tree, the GPU tree build)");
  } else {
    const std::vector<std::string> kernels = sweep_kernels(c);
    check_kernels_runnable(kernels);
    if (c.leaf_size != 0 &&
        std::none_of(kernels.begin(), kernels.end(), [](const std::string& k) { return find_kernel(k).adaptive(); }))
      throw UsageError("--leaf-size sets the adaptive tree of cpu-fmm-adaptive and fmm-adaptive; none of the kernels "
                       "has one");
    // Options no kernel of the sweep takes had been dropped without a word (a sweep of several
    // kinds applies each to the kernels it concerns).
    if (c.order_sample != 0 && c.orders != "0")
      throw UsageError("--order-sample chooses the order by measuring it; give no --order (given: " + c.orders + ")");
    if ((c.orders != "0" || c.accuracy != 0 || !c.near.empty() || c.order_sample != 0) &&
        std::none_of(kernels.begin(), kernels.end(), [](const std::string& k) { return find_kernel(k).far_field(); }))
      throw UsageError("--order, --order-sample, --accuracy and --near set the far field of a full method (cpu-fmm, "
                       "fmm, ...); none of the kernels has one");
    if (c.mask == "near" && std::none_of(kernels.begin(), kernels.end(), [](const std::string& k) {
          const KernelInfo& i = find_kernel(k);
          return !i.near_field() && !i.far_field();
        }))
      throw UsageError("--mask near applies to all-pairs kernels; none of the kernels is one");
    // Several GPUs: only GPU near-field kernels, on a machine (and build) that has them and NCCL.
    parse_cross_pairs_list(c);
    const std::vector<int> gpus = parse_gpus(c);
    check_cross_pairs_used(c.cross_pairs, process_count() > 1 ||
                                               std::any_of(gpus.begin(), gpus.end(), [](int g) { return g > 1; }));
    for (int g : gpus)
      for (const std::string& name : kernels) check_gpus(find_kernel(name), g);
  }
  if (c.resume && c.remeasure)
    throw UsageError("--resume keeps the rows already in the results file and --remeasure replaces them: give one");
  check_sweep_memory(c, validation);
  if (c.output.empty()) return;
  check_output_path(c.output, c.in.input);
  if ((c.resume || c.remeasure) && resolve_output(c.output).kind == OutputKind::stream)
    throw UsageError(std::string(c.remeasure ? "--remeasure" : "--resume") + " reads the rows of the results file; " +
                     c.output + " is not a file (its rows can only be written as they come)");
}

}  // namespace nf::cli
