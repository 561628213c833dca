#include "methods/auto_level.h"

#include <algorithm>

#include "core/numbers.h"
#include "farfield/order.h"
#include "methods/adaptive_method.h"
#include "methods/full_method.h"
#include "methods/level_costs.h"
#include "methods/registry.h"
#include "tree/adaptive.h"
#include "tree/box_rule.h"
#include "tree/tree.h"

namespace nf {

int deepest_auto_level(int dim, bool dense) {
  if (!dense) return max_level(dim);
  const double budget = 1024.0 * 1024.0 * 1024.0;
  int level = 0;
  while (level < max_dense_level(dim) && tree_bytes(dim, level + 1, 0, true) <= budget) ++level;
  return level;
}

LevelChoice choose_level_for(const Particles& p, const Domain& domain, const std::vector<std::string>& kernels) {
  bool dense = false;
  for (const std::string& name : kernels) {
    const KernelInfo& k = find_kernel(name);
    dense = dense || (k.near_field() && k.dense_tree());
  }
  const KernelCostModel* model = kernels.size() == 1 ? kernel_cost_model(kernels[0], p.dim) : nullptr;
  return choose_level(p, domain, deepest_auto_level(p.dim, dense), model);
}

int resolve_level(int level, const Particles& p, const Domain& domain, const std::vector<std::string>& kernels,
                  std::string& note) {
  note.clear();
  if (level != kAutoLevel) return level;
  const LevelChoice c = choose_level_for(p, domain, kernels);
  note = describe(c);
  return c.level;
}

FullLevelChoice choose_full_level_for(const LevelScan& scan, const KernelInfo& k, const MethodSetup& s,
                                      const Domain* domain, double mass) {
  // The order given, or (0) from the accuracy at each level, as the method takes it there.
  const double n = double(scan.particles());
  const MethodSetup run = full_setup_at(s, scan.dim(), kAutoLevel, scan.particles());
  const std::string near = full_near_kernel(k, run);
  const KernelInfo& nk = find_kernel(near);
  int deepest = std::min(scan.deepest(), deepest_auto_level(scan.dim(), nk.near_field() && nk.dense_tree()));
  const int unresolved = deepest;
  if (domain) deepest = deepest_resolved_level(*domain, scan.dim(), run.precision, run.softening, mass, deepest);
  // An order from the accuracy: only levels where the highest order reaches it (the model's error
  // grows with the level; a deeper level would be refused after the choice). Level 0 stays, to be
  // refused with the reason where even it cannot.
  const int resolved = deepest;
  if (run.order == 0) deepest = std::min(deepest, std::max(0, farfield::deepest_reaching(scan.dim(), run.accuracy, deepest, n)));
  const FullMethodRates rates = FullMethodCostModel::rates(k.gpu(), run.precision, near);
  const int dim = scan.dim();
  FullLevelChoice c = run.order > 0 ? choose_full_level(scan, deepest, run.order, rates)
                                    : choose_full_level(
                                          scan, deepest,
                                          [&](int l) { return farfield::order_for_accuracy(dim, run.accuracy, l, n); },
                                          rates);
  c.float_capped = resolved < unresolved && deepest == resolved;
  c.accuracy_capped = deepest < resolved;
  c.kernel = k.name;
  c.near = near;
  c.precision = run.precision;
  return c;
}

int AutoLevels::full(const KernelInfo& k, const MethodSetup& s, std::string& note) {
  note.clear();
  if (k.adaptive()) return adaptive(k, s, note);
  const MethodSetup run = full_setup_at(s, p_.dim, kAutoLevel, p_.size());  // order 0: from the accuracy at each level
  const std::string key = k.name + " " + full_near_kernel(k, run) + " " + to_string(run.precision) + " " +
                          std::to_string(run.order) + " " + format_double(run.accuracy) + " " +
                          format_double(run.softening);
  const auto known = chosen_.find(key);
  if (known != chosen_.end()) return known->second;
  if (!scan_) scan_ = std::make_unique<LevelScan>(p_, domain_, max_level(p_.dim));
  const FullLevelChoice c = choose_full_level_for(*scan_, k, run, &domain_, total_mass(p_));
  note = describe(c);
  chosen_[key] = c.level;
  return c.level;
}

int AutoLevels::adaptive(const KernelInfo& k, const MethodSetup& s, std::string& note) {
  const std::uint32_t size = leaf_size(adaptive_setup(s, p_.dim, k.gpu()));
  // The level's cap depends on the precision and the softening (float32's limits): both in the key,
  // so that a sweep over precisions does not reuse one precision's level for the other.
  const std::string key = k.name + " leaf size " + std::to_string(size) + " " + to_string(s.precision) + " " +
                          format_double(s.softening);
  const auto known = chosen_.find(key);
  if (known != chosen_.end()) return known->second;
  const int deepest = std::min(deepest_adaptive_level(p_.dim), max_level(p_.dim));
  const int cap = deepest_resolved_level(domain_, p_.dim, s.precision, s.softening, total_mass(p_), deepest);
  if (!scan_) scan_ = std::make_unique<LevelScan>(p_, domain_, max_level(p_.dim));
  LevelBoxes boxes;
  const int level = adaptive_depth(size, cap, [&](int l) {
    scan_->boxes(l, boxes);
    std::uint64_t most = 0;
    for (std::uint64_t c : boxes.count) most = std::max<std::uint64_t>(most, c);
    return most;
  });
  note = k.name + ": " + (s.leaf_size ? "" : "leaf size " + std::to_string(size) + " (auto), ") + "level " +
         std::to_string(level) +
         (level < cap    ? " (the shallowest where no box holds more than " + std::to_string(size) + " particles)"
          : cap < deepest ? std::string(s.precision == Precision::f64 ? " (the deepest at which float64 places the box centres"
                                                                       : " (the deepest at which float32 resolves the bodies and the far field") +
                                "; boxes of more than " + std::to_string(size) + " particles remain)"
                          : " (the deepest it takes; boxes of more than " + std::to_string(size) + " particles remain)");
  chosen_[key] = level;
  return level;
}

int deepest_adaptive_level(int dim) { return dim == 2 ? 16 : 12; }

int AutoLevels::near(const KernelInfo& k, std::string& note) {
  note.clear();
  const auto known = chosen_.find(k.name);
  if (known != chosen_.end()) return known->second;
  if (!scan_) scan_ = std::make_unique<LevelScan>(p_, domain_, max_level(p_.dim));
  const int deepest = deepest_auto_level(p_.dim, k.near_field() && k.dense_tree());
  const LevelChoice c = choose_level(*scan_, deepest, kernel_cost_model(k.name, p_.dim));
  note = k.name + ": " + describe(c);
  chosen_[k.name] = c.level;
  return c.level;
}

int resolve_level(int level, const Particles& p, const Domain& domain, const KernelInfo& k, const MethodSetup& s,
                  std::string& note) {
  note.clear();
  if (level != kAutoLevel) return level;
  if (!k.far_field()) return resolve_level(level, p, domain, std::vector<std::string>{k.name}, note);
  AutoLevels levels(p, domain);
  return levels.full(k, s, note);
}

}  // namespace nf
