#pragma once
//! `--level auto` for the commands that run kernels (forces, validate, bench, experiments): the
//! rule of tree/level_rule.h over the levels that every kernel of the run can take.

#include <string>
#include <vector>

#include "tree/domain.h"
#include "core/particles.h"
#include "tree/level_rule.h"

namespace nf {

//! The level value that stands for `--level auto` until the particles are known.
constexpr int kAutoLevel = -1;

//! Deepest level the rule considers: max_level(dim), or for kernels that read the paper's dense
//! layout the deepest level whose dense arrays take at most 1 GiB (2D level 12, 3D level 7).
int deepest_auto_level(int dim, bool dense);

//! The rule applied for these kernels (registry names; a dense-tree kernel limits the depth).
LevelChoice choose_level_for(const Particles& p, const Domain& domain, const std::vector<std::string>& kernels);

//! `level` itself, or for kAutoLevel the rule's choice, with `note` set to the line that says so
//! (commands print it); `note` is cleared otherwise.
int resolve_level(int level, const Particles& p, const Domain& domain, const std::vector<std::string>& kernels,
                  std::string& note);

}  // namespace nf
