#pragma once
// Inputs with extreme layouts for every kernel's checks (issue 9): one box holding almost all
// particles, a thin shell, many empty boxes, deep levels (2D 16+, 3D 10+), coincident points, 0
// and 1 particles. Small enough (N <= 3000) for float64 all-pairs references on the CPU.
#include <string>
#include <vector>

#include "tree/box_rule.h"
#include "ic/generate.h"
#include "helpers.h"
#include "tree/tree.h"

namespace nf::test {

//! One input and the level to run it at.
struct ExtremeInput {
  std::string name;     //!< distribution, dimension and level, e.g. "shell-3d-L7"
  Particles particles;  //!< random masses
  int level = 0;
  bool dense_ok = false;  //!< the paper's dense layout can take this level (and in < 512 MiB)
};

//! Every extreme input, 2D and 3D.
inline std::vector<ExtremeInput> extreme_inputs() {
  struct Spec {
    const char* dist;
    int dim, level;
    std::int64_t n;
  };
  const Spec specs[] = {
      {"core", 2, 6, 3000},     {"core", 3, 4, 2000},       // one box holds 99% of the particles
      {"core", 2, 16, 3000},    {"core", 3, 12, 2000},      // ... split over deep levels
      {"shell", 2, 10, 3000},   {"shell", 3, 7, 3000},      // boxes along a thin surface only
      {"shell", 2, 18, 2000},   {"shell", 3, 11, 2000},     // deep: most boxes hold one particle
      {"corners", 2, 16, 2000}, {"corners", 3, 10, 2000},   // 2^D clusters, everything between empty
      {"clusters", 2, 20, 3000}, {"plummer", 3, 13, 3000},  // deep levels on clustered data
      {"uniform", 2, 16, 3000}, {"uniform", 3, 21, 1000},   // sparse: almost no neighbors
  };
  std::vector<ExtremeInput> out;
  auto add = [&](const std::string& name, Particles p, int level) {
    const bool dense = level <= max_dense_level(p.dim) && tree_bytes(p.dim, level, p.size(), true) < 512.0 * (1 << 20);
    out.push_back({name, std::move(p), level, dense});
  };
  for (const Spec& s : specs)
    add(std::string(s.dist) + "-" + std::to_string(s.dim) + "d-L" + std::to_string(s.level), make(s.dist, s.dim, s.n, 90 + s.level),
        s.level);
  add("coincident-3d-L21", from_points(3, std::vector<std::vector<double>>(300, {0.2, -0.4, 7.0})), 21);
  add("coincident-2d-L3", from_points(2, std::vector<std::vector<double>>(300, {0.2, -0.4})), 3);
  add("single-2d-L31", from_points(2, {{0.5, 0.25}}), 31);
  add("single-3d-L5", from_points(3, {{0.5, 0.25, 0.125}}), 5);
  add("empty-2d-L18", from_points(2, {}), 18);
  add("empty-3d-L2", from_points(3, {}), 2);
  return out;
}

}  // namespace nf::test
