#include "methods/auto_level.h"

#include "tree/box_rule.h"
#include "methods/registry.h"
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
  return choose_level(p, domain, deepest_auto_level(p.dim, dense));
}

int resolve_level(int level, const Particles& p, const Domain& domain, const std::vector<std::string>& kernels,
                  std::string& note) {
  note.clear();
  if (level != kAutoLevel) return level;
  const LevelChoice c = choose_level_for(p, domain, kernels);
  note = describe(c);
  return c.level;
}

}  // namespace nf
