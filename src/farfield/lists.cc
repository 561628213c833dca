#include "farfield/lists.h"

#include <algorithm>
#include <string>

#include "core/errors.h"
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
NeighborLists level_lists(const TreeLevel& level, const TreeLevel& parents, int l) {
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
  std::uint64_t entries = 0;
  for (const auto& list : per_box) entries += list.size();
  check_list_entries(entries, l);
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

// count_group_slots: the 6^D candidate offsets o (per axis a source child coordinate -2..3
// relative to the target's parent's first child, stored + 2) that a neighbor parent at relative
// position r (per axis -1..1, stored + 1) with occupied children `children` (a bit per child)
// gives child c, less those adjacent to c: one bit per offset in kWords words.
template <int D>
struct OffsetTable {
  static constexpr int kChildren = 1 << D, kRelative = D == 2 ? 9 : 27, kOffsets = D == 2 ? 36 : 216;
  static constexpr int kWords = (kOffsets + 63) / 64;
  std::vector<std::uint64_t> bits = std::vector<std::uint64_t>(std::size_t(kChildren) * kRelative * 256 * kWords, 0);
  std::uint64_t* at(int c, int r, int children) { return &bits[index(c, r, children)]; }
  const std::uint64_t* at(int c, int r, int children) const { return &bits[index(c, r, children)]; }
  static std::size_t index(int c, int r, int children) {
    return ((std::size_t(c) * kRelative + r) * 256 + std::size_t(children)) * kWords;
  }
  OffsetTable() {
    for (int c = 0; c < kChildren; ++c)
      for (int r = 0; r < kRelative; ++r)
        for (int cs = 0; cs < kChildren; ++cs) {
          int o = 0, scale = 1;
          bool adjacent = true;
          for (int a = 0, rr = r; a < D; ++a, rr /= 3, scale *= 6) {
            const int s = 2 * (rr % 3 - 1) + ((cs >> a) & 1), t = (c >> a) & 1;
            adjacent = adjacent && s - t <= 1 && t - s <= 1;
            o += (s + 2) * scale;
          }
          if (adjacent) continue;
          for (int children = 0; children < 256; ++children)
            if (children >> cs & 1) at(c, r, children)[o / 64] |= std::uint64_t(1) << (o % 64);
        }
  }
};

template <int D>
double group_slots_at(int level, const std::vector<std::uint64_t>& key, std::uint32_t per_block) {
  using Table = OffsetTable<D>;
  static const Table table;
  std::vector<std::uint64_t> parent;
  std::vector<std::uint8_t> children;  // a bit per non-empty child
  for (std::uint64_t k : key) {
    if (parent.empty() || parent.back() != k >> D) {
      parent.push_back(k >> D);
      children.push_back(0);
    }
    children.back() |= std::uint8_t(1u << (k & (Table::kChildren - 1)));
  }
  const std::uint32_t mp = static_cast<std::uint32_t>(parent.size());
  const long blocks = long((mp + per_block - 1) / per_block);
  double slots = 0;
  // Per block and child c, the union over its parents with a child c of each relative position's
  // children; the table turns those into offsets.
#pragma omp parallel for schedule(static) reduction(+ : slots)
  for (long g = 0; g < blocks; ++g) {
    std::uint8_t seen[Table::kChildren][Table::kRelative] = {};
    const std::uint32_t end = static_cast<std::uint32_t>(std::min<std::uint64_t>(mp, std::uint64_t(g + 1) * per_block));
    for (std::uint32_t q = std::uint32_t(g) * per_block; q < end; ++q) {
      std::uint32_t nb[27], pc[D], nc[D];
      const int n = compact_neighbors<D>(parent.data(), mp, q, level - 1, false, nb);
      nb[n] = q;
      morton_coords<D>(parent[q], pc);
      for (int j = 0; j <= n; ++j) {
        morton_coords<D>(parent[nb[j]], nc);
        int r = 0;
        for (int a = D - 1; a >= 0; --a) r = 3 * r + int(nc[a]) - int(pc[a]) + 1;
        for (int c = 0; c < Table::kChildren; ++c)
          if (children[q] >> c & 1) seen[c][r] |= children[nb[j]];
      }
    }
    for (int c = 0; c < Table::kChildren; ++c) {
      std::uint64_t mask[Table::kWords] = {};
      for (int r = 0; r < Table::kRelative; ++r)
        if (seen[c][r])
          for (int w = 0; w < Table::kWords; ++w) mask[w] |= table.at(c, r, seen[c][r])[w];
      for (int w = 0; w < Table::kWords; ++w) slots += double(__builtin_popcountll(mask[w])) * per_block;
    }
  }
  return slots;
}

}  // namespace

double count_group_slots(int dim, int level, const std::vector<std::uint64_t>& key, std::uint32_t per_block) {
  if (level < 2 || key.empty()) return 0;
  return dim == 2 ? group_slots_at<2>(level, key, per_block) : group_slots_at<3>(level, key, per_block);
}

std::uint64_t count_translations(int dim, int level, const std::vector<std::uint64_t>& key) {
  if (level < 2) return 0;
  return dim == 2 ? translations_at<2>(level, key) : translations_at<3>(level, key);
}

void check_list_entries(std::uint64_t entries, int level) {
  if (entries <= 0xffffffffull) return;
  throw UsageError("level " + std::to_string(level) + "'s interaction (M2L) lists hold " + std::to_string(entries) +
                   " entries, more than the 2^32 - 1 their offsets take: use a shallower --level");
}

InteractionLists build_interaction_lists(const TreeLevels& t) {
  InteractionLists lists(t.level.size());
  for (std::size_t l = 0; l < t.level.size(); ++l) {
    lists[l].offset.assign(std::size_t(t.level[l].boxes()) + 1, 0);
    if (l < 2) continue;
    lists[l] = t.dim == 2 ? level_lists<2>(t.level[l], t.level[l - 1], int(l)) : level_lists<3>(t.level[l], t.level[l - 1], int(l));
  }
  return lists;
}

}  // namespace nf::farfield
