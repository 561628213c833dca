#include "farfield/lists.h"

#include <algorithm>

#include "tree/morton.h"
#include "tree/neighbors.h"

namespace nf::farfield {
namespace {

// True when boxes of keys a and b (one level) are the same or adjacent: coordinates differ by at
// most 1 along every axis.
template <int D>
bool adjacent(std::uint64_t a, std::uint64_t b) {
  std::uint32_t ca[D], cb[D];
  morton_coords<D>(a, ca);
  morton_coords<D>(b, cb);
  for (int k = 0; k < D; ++k)
    if ((ca[k] > cb[k] ? ca[k] - cb[k] : cb[k] - ca[k]) > 1) return false;
  return true;
}

template <int D>
NeighborLists level_lists(const TreeLevel& level, const TreeLevel& parents) {
  NeighborLists out;
  const std::uint32_t m = level.boxes();
  out.offset.assign(std::size_t(m) + 1, 0);
  std::vector<std::vector<std::uint32_t>> per_box(m);
#pragma omp parallel for schedule(dynamic, 64)
  for (long lb = 0; lb < long(m); ++lb) {
    const std::uint32_t b = static_cast<std::uint32_t>(lb);
    const std::uint32_t p = level.parent[b];
    std::vector<std::uint32_t>& list = per_box[b];
    auto take_children = [&](std::uint32_t q) {
      for (std::uint32_t c = parents.child[q]; c < parents.child[q + 1]; ++c)
        if (!adjacent<D>(level.key[b], level.key[c])) list.push_back(c);
    };
    take_children(p);
    for (std::uint32_t l = parents.near.offset[p]; l < parents.near.offset[p + 1]; ++l) take_children(parents.near.ids[l]);
    std::sort(list.begin(), list.end());
  }
  for (std::uint32_t b = 0; b < m; ++b) out.offset[b + 1] = out.offset[b] + static_cast<std::uint32_t>(per_box[b].size());
  out.ids.resize(out.offset[m]);
  for (std::uint32_t b = 0; b < m; ++b) std::copy(per_box[b].begin(), per_box[b].end(), out.ids.begin() + out.offset[b]);
  return out;
}

template <int D>
std::uint64_t translations_at(int level, const std::vector<std::uint64_t>& key) {
  const std::uint32_t m = static_cast<std::uint32_t>(key.size());
  // The parents (key >> d, ascending) and their non-empty children (runs of equal parent keys).
  std::vector<std::uint64_t> parent;
  std::vector<std::uint32_t> children;
  for (std::uint64_t k : key) {
    if (parent.empty() || parent.back() != k >> D) {
      parent.push_back(k >> D);
      children.push_back(0);
    }
    ++children.back();
  }
  const std::uint32_t mp = static_cast<std::uint32_t>(parent.size());
  std::uint64_t total = 0;
  // Every child of parent q sees the children of q's neighbors and of q itself ...
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (long lq = 0; lq < long(mp); ++lq) {
    const std::uint32_t q = static_cast<std::uint32_t>(lq);
    std::uint32_t nb[26];
    const int n = compact_neighbors<D>(parent.data(), mp, q, level - 1, false, nb);
    std::uint64_t seen = children[q];
    for (int j = 0; j < n; ++j) seen += children[nb[j]];
    total += std::uint64_t(children[q]) * seen;
  }
  // ... less its own non-empty neighbors and itself.
  std::uint64_t near = 0;
#pragma omp parallel for schedule(static) reduction(+ : near)
  for (long lb = 0; lb < long(m); ++lb) {
    std::uint32_t nb[26];
    near += 1 + std::uint64_t(compact_neighbors<D>(key.data(), m, static_cast<std::uint32_t>(lb), level, false, nb));
  }
  return total - near;
}

}  // namespace

std::uint64_t count_translations(int dim, int level, const std::vector<std::uint64_t>& key) {
  if (level < 2) return 0;
  return dim == 2 ? translations_at<2>(level, key) : translations_at<3>(level, key);
}

InteractionLists build_interaction_lists(const TreeLevels& t) {
  InteractionLists lists(t.level.size());
  for (std::size_t l = 0; l < t.level.size(); ++l) {
    lists[l].offset.assign(std::size_t(t.level[l].boxes()) + 1, 0);
    if (l < 2) continue;
    lists[l] = t.dim == 2 ? level_lists<2>(t.level[l], t.level[l - 1]) : level_lists<3>(t.level[l], t.level[l - 1]);
  }
  return lists;
}

}  // namespace nf::farfield
