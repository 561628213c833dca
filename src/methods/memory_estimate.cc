#include "methods/memory_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/host_memory.h"
#include "farfield/lists.h"
#include "farfield/m2l_group_plan.h"
#include "farfield/m2l_thread_orders.h"
#include "farfield/multi_index.h"
#include "methods/adaptive_method.h"
#include "methods/auto_level.h"
#include "methods/full_method.h"
#include "tree/box_rule.h"
#include "tree/tree.h"

namespace nf {
namespace {

constexpr double kMargin = 1.1;  // what the estimate leaves out (docs/design.md §6)

double sum(const std::vector<MemoryNeed::Part>& parts) {
  double s = 0;
  for (const auto& p : parts) s += p.bytes;
  return s;
}

// The level the tree is counted at: the given one, or for --level auto the shallowest with at
// least n boxes (the rule aims at 16 per box, so it chooses no deeper than about that), and no
// deeper than the rule goes for the kernel's layout.
int estimate_level(int level, int dim, std::uint64_t n, bool dense) {
  if (level != kAutoLevel) return level;
  int k = 0;
  while (k < max_level(dim) && std::ldexp(1.0, dim * k) < static_cast<double>(n)) ++k;
  return std::min(k, deepest_auto_level(dim, dense));
}

// Non-empty boxes over the levels 0..K: at most min(n, 2^dK) at the leaves, and each level above
// at most 1/2^d of the one below.
double boxes_over_levels(int dim, int level, std::uint64_t n) {
  const double leaves = std::min(static_cast<double>(n), std::ldexp(1.0, dim * level));
  const double children = std::ldexp(1.0, dim);
  return leaves * children / (children - 1.0);
}

// The near field of a kernel on one device: tree, bodies and accelerations in its precision.
void add_near_field(std::vector<MemoryNeed::Part>& parts, const KernelInfo& k, int dim, int level, std::uint64_t n,
                    double scalar, int threads) {
  const double nd = static_cast<double>(n);
  // fmm-adaptive's GPU tree has no neighbor lists (it plans its leaves' near field itself).
  const bool lists = !(k.adaptive() && k.gpu());
  parts.push_back({lists ? "tree" : "tree (no neighbor lists)", tree_bytes(dim, level, n, k.dense_tree(), lists)});
  parts.push_back({"bodies and accelerations", nd * 8.0 * scalar});
  if (!k.gpu() && k.newton3() && k.openmp())
    parts.push_back({"per-thread buffers (" + std::to_string(threads) + " threads)", nd * 4.0 * scalar * threads});
}

// A byte count in digits, or in floating point beyond 2^64.
std::string count_text(double bytes) {
  if (bytes < 1.8e19) return std::to_string(static_cast<std::uint64_t>(bytes));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", bytes);
  return buf;
}

}  // namespace

double MemoryNeed::host_bytes() const { return sum(host); }
double MemoryNeed::gpu_bytes() const { return sum(gpu); }

double particle_bytes(int dim, std::uint64_t n, bool velocities, bool ids) {
  return static_cast<double>(n) * 8.0 * (dim + 1 + (velocities ? dim : 0) + (ids ? 1 : 0));
}

void add_method_memory(MemoryNeed& need, const KernelInfo& k, const MethodSetup& s, int dim, std::uint64_t n,
                       int threads, int gpus) {
  const double nd = static_cast<double>(n);
  const double scalar = s.precision == Precision::f64 ? 8.0 : 4.0;
  std::vector<MemoryNeed::Part> device;
  need.host.push_back({"accelerations (float64, input order)", nd * dim * 8.0});
  if (k.far_field()) {
    // An adaptive method builds the compact tree and sums its near field itself (k: no dense tree).
    const KernelInfo& near = k.adaptive() ? k : find_kernel(full_near_kernel(k, s));
    const int level = estimate_level(s.level, dim, n, near.dense_tree());
    // The order it runs (at the estimated level, where the order comes from the accuracy).
    MethodSetup at = s;
    at.level = level;
    const MethodSetup full = k.adaptive() ? adaptive_setup(at, dim, k.gpu()) : full_setup(at, dim, n);
    auto& parts = k.gpu() ? device : need.host;
    add_near_field(parts, near, dim, level, n, scalar, threads);
    double boxes = boxes_over_levels(dim, level, n);
    // fmm-adaptive keeps expansions for its kept boxes only: about 4.4 N / S (3D uniform 2^24, S =
    // 244) to 5.4 N / S (3D Plummer 2^24, S = 256), from the upward counts of results/fmm-adaptive;
    // 8 N / S here, and the method checks the exact figure before it allocates them (gpu_fmm_adaptive.cc).
    if (k.adaptive() && k.gpu()) boxes = std::min(boxes, 8.0 * nd / double(leaf_size(full)) + 1.0);
    const double terms = dim == 2 ? farfield::terms<2>(full.order) : farfield::terms<3>(full.order);
    const double list = farfield::max_list_boxes(dim);
    parts.push_back({"expansions (order " + std::to_string(full.order) + ")", 2.0 * terms * scalar * boxes});
    parts.push_back({"interaction lists", 4.0 * list * boxes});
    if (k.gpu() && !k.adaptive()) parts.push_back({"P2M's list of larger boxes", 4.0 * boxes});
    // M2L a thread per target (farfield/m2l_thread_gpu.h) copies a level's moments to rows padded to
    // whole 16-byte loads where terms is not a multiple of them: at most every box's, bounded here
    // by the boxes of all levels.
    const int most = dim == 2 ? (scalar == 4.0 ? farfield::kWideMaxOrder<2, float> : farfield::kWideMaxOrder<2, double>)
                              : (scalar == 4.0 ? farfield::kWideMaxOrder<3, float> : farfield::kWideMaxOrder<3, double>);
    const double stride = farfield::thread_row_stride(int(terms), int(scalar));
    if (k.gpu() && full.order >= 1 && full.order <= most && stride != terms)
      parts.push_back({"M2L's padded moments", stride * scalar * boxes});
    // Where the orders per offset apply to it (3D float p = 8), it also copies a level's lists
    // grouped by order and keeps a count word a box (bounded by all levels' lists and boxes).
    if (k.gpu() && farfield::thread_lists_by_order(dim, int(scalar), full.order))
      parts.push_back({"M2L's lists by order", 4.0 * list * boxes + 8.0 * boxes});
    // Above those orders M2L runs by sibling groups (farfield/m2l_gpu.h), whole or in slices, and
    // keeps each level's operator tables, 7^D of an order's table entries, for levels 0..leaf:
    // 0.14 GB a level at 3D float p = 17. Where its moments leave no room in a block's shared
    // memory (227 KB here, Hopper's limit), or it would take more than kMostSlices slices (3D float
    // p = 18), the older kernel runs and keeps none. At the float
    // orders that run on the tensor cores (farfield/m2l_tensor_gpu.h) the groups keep each level's
    // signed derivative tables instead, 7^D of 2 terms + 1 entries (rounded up to 4).
    namespace plan = farfield::m2l_plan;
    const std::size_t optin = std::size_t(227) * 1024;
    if (k.gpu() && full.order > most && scalar == 4.0 && plan::tensor_by_default(dim, full.order) &&
        plan::tensor_kernel_fits(dim, full.order, optin))
      parts.push_back({"M2L's signed derivative tables",
                       (level + 1.0) * std::pow(7.0, dim) * plan::tensor_table_entries(dim, full.order) * 4.0});
    else if (k.gpu() && full.order > most && plan::group_kernel_fits(dim, int(scalar), full.order, optin)) {
      parts.push_back({"M2L's operator tables",
                       (level + 1.0) * std::pow(7.0, dim) * plan::group_table_entries(dim, full.order, int(scalar)) * scalar});
      // At the orders where it packs them, it copies each level's moments packed (bfloat16 from
      // packed_from; bounded here by every level's boxes).
      const int from = plan::packed_from(dim, full.order);
      if (plan::packs_moments(dim, int(scalar), full.order) && from < int(terms))
        parts.push_back({"M2L's packed moments", 4.0 * plan::packed_words(int(terms), from) * boxes});
    }
  } else if (k.near_field()) {
    add_near_field(k.gpu() ? device : need.host, k, dim, estimate_level(s.level, dim, n, k.dense_tree()), n, scalar,
                   threads);
  } else if (!k.gpu()) {  // cpu-allpairs: float64 bodies of the inputs as seen, its own output
    need.host.push_back({"bodies and accelerations", nd * (32.0 + dim * 8.0 + (scalar == 4.0 ? 16.0 : 0.0))});
    if (s.mask == Mask::near) need.host.push_back({"near-mask cells", nd * 16.0});
  } else {
    device.push_back({"bodies and accelerations", nd * 8.0 * scalar});
    if (s.mask == Mask::near) device.push_back({"near-mask cells", nd * 16.0});
  }
  if (!k.gpu()) return;
  // A GPU method also holds the uploaded particles there, and on the host its packed bodies or
  // downloaded accelerations and the tree's order.
  device.push_back({"uploaded particles", particle_bytes(dim, n, false, false)});
  need.host.push_back({"bodies and accelerations copied to and from the GPU", nd * (4.0 * scalar + 4.0)});
  for (auto& part : device) need.gpu.push_back({part.what, part.bytes / std::max(gpus, 1)});
}

void add_reference_memory(MemoryNeed& need, int dim, std::uint64_t n) {
  need.host.push_back({"float64 reference", static_cast<double>(n) * (32.0 + 2.0 * dim * 8.0)});
}

void check_memory(const MemoryNeed& need, const std::string& what, const std::string& outcome) {
  const auto refuse = [&](const std::vector<MemoryNeed::Part>& parts, double available, const std::string& where,
                          const std::string& source) {
    const double bytes = sum(parts);
    if (bytes * kMargin <= available) return;
    std::vector<MemoryNeed::Part> largest = parts;
    std::sort(largest.begin(), largest.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    std::string list;
    for (std::size_t i = 0; i < largest.size() && i < 3; ++i)
      list += (i ? ", " : "") + largest[i].what + " " + byte_text(largest[i].bytes);
    throw UsageError(what + " needs about " + byte_text(bytes) + " (" + count_text(bytes) + " bytes) of " + where +
                     " (" + list + "); with a 10% margin for what the estimate leaves out, that is more than the " +
                     byte_text(available) + " (" + count_text(available) + " bytes) available (" + source +
                     "); " + outcome);
  };
  std::string source;
  const double host = static_cast<double>(available_host_memory(&source));
  refuse(need.host, host, "host memory", source);
  if (need.gpu.empty() || !gpu::available()) return;
  refuse(need.gpu, static_cast<double>(gpu::device_info().free_bytes), "GPU memory", "free on the GPU, cudaMemGetInfo");
}

}  // namespace nf
