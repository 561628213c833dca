#include "tree/levels.h"

#include "tree/morton.h"

namespace nf {

void TreeLevels::centre(int l, std::uint64_t key, double (&c)[3]) const {
  std::uint32_t ic[3] = {0, 0, 0};
  if (dim == 2) {
    std::uint32_t k2[2];
    morton_coords<2>(key, k2);
    ic[0] = k2[0], ic[1] = k2[1];
  } else {
    std::uint32_t k3[3];
    morton_coords<3>(key, k3);
    ic[0] = k3[0], ic[1] = k3[1], ic[2] = k3[2];
  }
  const double h = side(l);
  for (int a = 0; a < 3; ++a) c[a] = a < dim ? domain.origin[a] + (ic[a] + 0.5) * h : 0.0;
}

TreeLevels build_levels(const Tree& t) {
  TreeLevels out;
  out.dim = t.dim;
  out.leaf = t.level;
  out.domain = t.domain;
  out.level.resize(std::size_t(t.level) + 1);
  TreeLevel& leaf = out.level[t.level];
  leaf.key = t.box_key;
  leaf.first = t.box_first.empty() ? std::vector<std::uint32_t>{0} : t.box_first;
  leaf.near = t.near_full;
  // Coarser levels: the runs of equal parent keys among the finer level's keys.
  for (int l = t.level; l > 0; --l) {
    TreeLevel& fine = out.level[l];
    TreeLevel& coarse = out.level[l - 1];
    const std::uint32_t m = fine.boxes();
    fine.parent.resize(m);
    coarse.first.assign(1, 0);
    coarse.child.assign(1, 0);
    for (std::uint32_t b = 0; b < m; ++b) {
      const std::uint64_t pk = fine.key[b] >> t.dim;
      if (coarse.key.empty() || coarse.key.back() != pk) {
        if (!coarse.key.empty()) {
          coarse.first.push_back(fine.first[b]);
          coarse.child.push_back(b);
        }
        coarse.key.push_back(pk);
      }
      fine.parent[b] = coarse.boxes() - 1;
    }
    coarse.first.push_back(fine.first[m]);
    coarse.child.push_back(m);
    if (coarse.key.empty()) coarse.first.assign(1, 0), coarse.child.assign(1, 0);
    NeighborLists half;  // unused: the far field reads the full lists
    build_compact_lists(t.dim, l - 1, coarse.key, coarse.near, half);
  }
  return out;
}

}  // namespace nf
