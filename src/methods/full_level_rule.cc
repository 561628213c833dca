#include "methods/full_level_rule.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "core/numbers.h"
#include "farfield/lists.h"
#include "farfield/op_counts.h"

namespace nf {
namespace {

// The running figures of a scan from level 0 down: each level's boxes and the translations so far.
struct Running {
  std::vector<std::uint64_t> boxes;
  std::uint64_t translations = 0;
  std::uint64_t full_translations = 0;  // on levels filling >= farfield::kStagedFill of their parents' places
  // The sibling-group kernel's translations, empty slots included (GPU), with 32 and with 64
  // targets a block: the width follows the order, and with an order per level (from the accuracy)
  // a level's method runs every level at its own order, so both sums are kept.
  double slots[2] = {0, 0};
};

// The thread kernel's M2L seconds over the levels in `run`: staged on the full levels where the
// order stages, unstaged elsewhere.
double thread_m2l_s(int dim, int order, double madds, const Running& run, const FullMethodRates& rates) {
  const double full = rates.m2l_staged(dim, order) ? double(run.full_translations) : 0.0;
  return (double(run.translations) - full) * rates.m2l_thread_translation_s(dim, madds) +
         full * rates.m2l_staged_translation_s(dim, madds);
}

// Level h.level's figures, given the levels above it in `run` (which takes this one in).
FullLevelCost cost_of(const LevelBoxes& h, std::uint64_t n, int order, const FullMethodRates& rates, Running& run) {
  run.boxes.push_back(h.key.size());
  const std::uint64_t translations = farfield::count_translations(h.dim, h.level, h.key);
  run.translations += translations;
  // The level's fill as the GPU's thread kernel counts it (farfield/m2l_thread_gpu.cu).
  const double parents = run.boxes.size() >= 2 ? double(run.boxes[run.boxes.size() - 2]) : 0.0;
  if (farfield::level_fill(h.dim, double(h.key.size()), parents) >= farfield::kStagedFill)
    run.full_translations += translations;
  // The GPU's M2L (farfield/m2l_gpu.h) computes every slot of a block's offsets that any of its
  // targets uses: on sparse levels it costs by those, not by the translations.
  if (rates.m2l_by_slots && h.level >= 2)
    for (int w = 0; w < 2; ++w) run.slots[w] += farfield::count_group_slots(h.dim, h.level, h.key, w ? 64 : 32);
  const double slots = run.slots[rates.m2l_by_slots && rates.m2l_wide(h.dim, order) ? 1 : 0];
  FullLevelCost c;
  c.level = h.level;
  c.boxes = h.key.size();
  c.pairs = box_pairs(h);
  c.translations = run.translations;
  c.full_translations = run.full_translations;
  const farfield::OpCounts ops = farfield::op_counts(h.dim, order, n, run.boxes, run.translations, c.pairs);
  c.near_ms = 1e3 * double(c.pairs) / rates.near_pairs_per_s;
  const double madds = double(farfield::m2l_madds(h.dim, order));
  c.far_ms = 1e3 * double(ops.upward + ops.downward) / rates.pass_madds_per_s +
             (!rates.m2l_by_slots                ? rates.m2l_ms(double(run.translations), double(ops.m2l))
              : run.translations == 0            ? 0.0
              : rates.m2l_threaded(h.dim, order) ? 1e3 * thread_m2l_s(h.dim, order, madds, run, rates)
                                                 : 1e3 * slots * rates.m2l_slot_s(madds));
  return c;
}

}  // namespace

FullMethodRates FullMethodCostModel::rates(bool gpu, Precision precision, const std::string& near) {
  const bool f64 = precision == Precision::f64;
  FullMethodRates r = !gpu ? (f64 ? kCpuDouble : kCpu) : f64 ? kGpuDouble : kGpuFloat;
  for (const NearRate& k : kNearKernels)
    if (near == k.kernel) r.near_pairs_per_s = f64 ? k.double_pairs_per_s : k.float_pairs_per_s;
  return r;
}

std::uint32_t auto_leaf_size(int dim, int order, const FullMethodRates& rates) {
  // The slot curve is labelled by the full order's multiply-adds; the CPU's time follows the mean
  // multiply-adds of a translation with the orders per offset.
  const double madds = double(farfield::m2l_madds(dim, order));
  const double translation_s =
      rates.m2l_threaded(dim, order) ? rates.m2l_thread_translation_s(dim, madds)
      : rates.m2l_by_slots           ? rates.m2l_slot_s(madds)
                           : double(farfield::m2l_madds_mean(dim, order)) / rates.m2l_madds_per_s + rates.m2l_s_per_translation;
  const double size = (dim == 2 ? 6.8 : 8.8) * std::sqrt(std::max(translation_s, 0.0) * rates.adaptive_near_pairs_per_s);
  return static_cast<std::uint32_t>(std::clamp(std::round(size), 16.0, 4096.0));
}

const FullLevelCost& FullLevelChoice::chosen() const {
  for (const FullLevelCost& c : evaluated)
    if (c.level == level) return c;
  throw std::logic_error("FullLevelChoice: the chosen level was not evaluated");
}

FullLevelChoice choose_full_level(const LevelScan& scan, int deepest, int order, const FullMethodRates& rates) {
  return choose_full_level(scan, deepest, [order](int) { return order; }, rates);
}

FullLevelChoice choose_full_level(const LevelScan& scan, int deepest, const std::function<int(int)>& order_at,
                                  const FullMethodRates& rates) {
  if (deepest < 0 || deepest > scan.deepest()) throw std::logic_error("choose_full_level: deepest outside the scan");
  FullLevelChoice choice;
  choice.deepest = deepest;
  choice.dim = scan.dim();
  choice.particles = scan.particles();
  choice.rates = rates;
  const double n_ms = 1e3 * double(scan.particles()) / rates.near_pairs_per_s;  // pairs(K) >= N
  double best = std::numeric_limits<double>::infinity();
  Running run;
  LevelBoxes h;
  for (int level = 0; level <= deepest; ++level) {
    scan.boxes(level, h);
    // The boxes and translations gathered in `run` do not depend on the order (its slots are kept
    // for both widths); the whole method at leaf level `level` runs at order_at(level).
    const int order = order_at(level);
    FullLevelCost c = cost_of(h, scan.particles(), order, rates, run);
    c.order = order;
    choice.evaluated.push_back(c);
    if (c.ms() < best) {
      best = c.ms();
      choice.level = level;
      choice.order = c.order;
    }
    // Deeper levels have at least N pairs and at least this level's far field (their order is
    // never lower).
    if (n_ms + c.far_ms >= best) break;
  }
  return choice;
}

FullLevelCost full_level_cost(const LevelScan& scan, int level, int order, const FullMethodRates& rates) {
  Running run;
  LevelBoxes h;
  FullLevelCost c;
  for (int l = 0; l <= level; ++l) {
    scan.boxes(l, h);
    c = cost_of(h, scan.particles(), order, rates, run);
  }
  return c;
}

// The M2L rate of the rule's line: per computed slot of the GPU kernel at this order, or the CPU's
// multiply-adds per second.
std::string m2l_rate(const FullLevelChoice& c) {
  if (!c.rates.m2l_by_slots)
    return format_number("%.2g", c.rates.m2l_madds_per_s) + " multiply-adds/s (+ " +
           format_number("%.2g", c.rates.m2l_s_per_translation * 1e9) + " ns a translation)";
  return format_number("%.3g", c.rates.m2l_slot_s(double(farfield::m2l_madds(c.dim, c.order))) * 1e9) + " ns a computed slot";
}

std::string describe(const FullLevelChoice& c) {
  std::string levels;
  const bool orders_vary = std::any_of(c.evaluated.begin(), c.evaluated.end(),
                                       [&](const FullLevelCost& e) { return e.order != c.evaluated.front().order; });
  for (const FullLevelCost& e : c.evaluated)
    levels += (levels.empty() ? "" : ", ") + std::to_string(e.level) + (e.level == c.level ? "*" : "") +
              (orders_vary ? " (p" + std::to_string(e.order) + ")" : "") + ": " + format_number("%.3g", e.near_ms) + " + " +
              format_number("%.3g", e.far_ms);
  return "level auto: " + std::to_string(c.level) + " (" + c.kernel + " p" + std::to_string(c.order) + " " +
         to_string(c.precision) + ", near field " + c.near + ", " + std::to_string(c.dim) + "D, N = " +
         std::to_string(c.particles) + ": modeled near + far ms per level " + levels + "; rule: least near + far " +
         "time at " + format_number("%.2g", c.rates.near_pairs_per_s) + " pairs/s, M2L " + m2l_rate(c) + " and passes " +
         format_number("%.2g", c.rates.pass_madds_per_s) +
         " multiply-adds/s, over levels 0.." + std::to_string(c.deepest) +
         (c.float_capped && c.precision == Precision::f64
              ? ", the deepest at which float64 places the box centres (its spacing within 2^-20 of a leaf side)"
          : c.float_capped ? ", the deepest float32 takes (every body inside its leaf box, the leading far-field "
                             "terms above 1e-30)"
          : c.accuracy_capped ? ", the deepest where order " + std::to_string(farfield::kMaxOrder) +
                                    " reaches the accuracy in the error model"
                              : "") +
         ")";
}

}  // namespace nf
