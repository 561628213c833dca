#pragma once
//! `--level auto` for the commands that run kernels (forces, validate, bench, experiments,
//! simulate): for near-field kernels the rule of tree/level_rule.h over the levels that every
//! kernel of the run can take; for a full method (kFarField) the balance of its near field against
//! its far field at the order it runs (methods/full_level_rule.h, docs/design.md §16).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tree/domain.h"
#include "core/particles.h"
#include "methods/force_method.h"
#include "methods/full_level_rule.h"
#include "tree/level_rule.h"

namespace nf {

//! The level value that stands for `--level auto` until the particles are known.
constexpr int kAutoLevel = -1;

//! Deepest level the rule considers: max_level(dim), or for kernels that read the paper's dense
//! layout the deepest level whose dense arrays take at most 1 GiB (2D level 12, 3D level 7).
int deepest_auto_level(int dim, bool dense);

//! Deepest level `--level auto` gives an adaptive full method: 2D 16, 3D 12.
int deepest_adaptive_level(int dim);

//! The rule applied for these kernels (registry names; a dense-tree kernel limits the depth); one
//! kernel with a cost model of its own (methods/level_costs.h) gets that model's choice.
LevelChoice choose_level_for(const Particles& p, const Domain& domain, const std::vector<std::string>& kernels);

//! `level` itself, or for kAutoLevel the rule's choice, with `note` set to the line that says so
//! (commands print it); `note` is cleared otherwise.
int resolve_level(int level, const Particles& p, const Domain& domain, const std::vector<std::string>& kernels,
                  std::string& note);

//! The full-method rule for full method k with setup s (order, accuracy, near kernel, precision):
//! the order as the method resolves it, the near kernel's and device's rates, levels down to the
//! deepest the near kernel's tree can take and, given `domain` and the bodies' total |mass|, the
//! deepest a float32 method accepts (deepest_resolved_level); the description's fields filled.
FullLevelChoice choose_full_level_for(const LevelScan& scan, const KernelInfo& k, const MethodSetup& s,
                                      const Domain* domain = nullptr, double mass = 0);

//! `--level auto` over one input for runs that differ in kernel and setup (a sweep's cells): the
//! particles' keys sorted once, each full method's choice made once per (kernel, near kernel,
//! precision, order). The particles must outlive it.
class AutoLevels {
 public:
  AutoLevels(const Particles& p, const Domain& domain) : p_(p), domain_(domain) {}
  //! The level of full method k with setup s; `note` is the choice's line the first time it is
  //! made, empty when it was made before.
  int full(const KernelInfo& k, const MethodSetup& s, std::string& note);
  //! The level of near-field kernel k by its own cost (methods/level_costs.h; the generic rule
  //! when it has none) within its own depth limit; `note` as above.
  int near(const KernelInfo& k, std::string& note);
  //! The deepest level of adaptive full method k (tree/adaptive.h): the shallowest level where no
  //! box holds more than the leaf size, at most deepest_adaptive_level; `note` as above.
  int adaptive(const KernelInfo& k, const MethodSetup& s, std::string& note);

 private:
  const Particles& p_;
  Domain domain_;
  std::unique_ptr<LevelScan> scan_;  // at max_level, made on first use
  std::map<std::string, int> chosen_;
};

//! `level` itself, or for kAutoLevel the choice for kernel k run with setup s: a full method's
//! rule (the order, near kernel and precision of s), else the near-field rule for {k}; `note` as
//! above.
int resolve_level(int level, const Particles& p, const Domain& domain, const KernelInfo& k, const MethodSetup& s,
                  std::string& note);

}  // namespace nf
