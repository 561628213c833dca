#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/box_rule.h"
#include "common/errors.h"
#include "quadtree/morton.h"
#include "quadtree/neighbors.h"
#include "quadtree/tree.h"

namespace nf {
namespace {

std::string gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

template <int D>
std::uint32_t box_of(const Particles& p, std::size_t i, int level, const Domain& dom) {
  std::uint32_t c[D];
  for (int a = 0; a < D; ++a) c[a] = box_coordinate(p.coord(i, a), dom.origin[a], dom.side, level);
  return morton_encode<D>(c);
}

template <int D>
void build_lists(int level, NeighborLists& full, NeighborLists& half) {
  const std::uint32_t nbox = 1u << (D * level);
  full.offset.assign(nbox + 1, 0);
  half.offset.assign(nbox + 1, 0);
  full.ids.clear();
  half.ids.clear();
  full.ids.reserve(full_link_count(D, level));
  half.ids.reserve(full_link_count(D, level) / 2);
  std::uint32_t nb[26];
  for (std::uint32_t b = 0; b < nbox; ++b) {
    const int n = box_neighbors<D>(b, level, false, nb);
    for (int k = 0; k < n; ++k) {
      full.ids.push_back(nb[k]);
      if (nb[k] > b) half.ids.push_back(nb[k]);
    }
    full.offset[b + 1] = static_cast<std::uint32_t>(full.ids.size());
    half.offset[b + 1] = static_cast<std::uint32_t>(half.ids.size());
  }
}

template <int D>
Tree build(const Particles& p, int level, const Domain& dom) {
  Tree t;
  t.dim = D;
  t.level = level;
  t.domain = dom;
  t.nbox = 1u << (D * level);
  const std::size_t n = p.size();

  // Counting sort by box: stable, O(N + nbox), the same order a stable radix sort gives.
  std::vector<std::uint32_t> key(n);
  t.box_start.assign(t.nbox + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    key[i] = box_of<D>(p, i, level, dom);
    ++t.box_start[key[i] + 1];
  }
  for (std::uint32_t b = 0; b < t.nbox; ++b) t.box_start[b + 1] += t.box_start[b];
  std::vector<std::uint32_t> next(t.box_start.begin(), t.box_start.end() - 1);
  t.order.resize(n);
  t.particle_box.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t s = next[key[i]]++;
    t.order[s] = static_cast<std::uint32_t>(i);
    t.particle_box[s] = key[i];
  }
  for (std::uint32_t b = 0; b < t.nbox; ++b)
    if (t.box_start[b + 1] > t.box_start[b]) t.nonempty.push_back(b);
  build_lists<D>(level, t.full, t.half);
  return t;
}

}  // namespace

std::uint32_t Tree::max_box_count() const {
  std::uint32_t m = 0;
  for (std::uint32_t b = 0; b < nbox; ++b) m = std::max(m, box_count(b));
  return m;
}

std::uint32_t Tree::min_box_count() const {
  std::uint32_t m = box_count(0);
  for (std::uint32_t b = 1; b < nbox; ++b) m = std::min(m, box_count(b));
  return m;
}

std::uint64_t full_link_count(int dim, int level) {
  const std::uint64_t n = std::uint64_t(1) << level, m = 3 * n - 2;
  return dim == 2 ? m * m - n * n : m * m * m - n * n * n;
}

std::uint64_t tree_bytes(int dim, int level, std::uint64_t particles) {
  const std::uint64_t nbox = std::uint64_t(1) << (dim * level);
  const std::uint64_t links = full_link_count(dim, level);
  // box_start, nonempty, two offset arrays; full + half ids; order + sorted keys per particle.
  return 4 * (4 * nbox + 4) + 4 * (links + links / 2) + 8 * particles;
}

void check_level(int dim, int level, std::uint64_t particles, std::uint64_t available_bytes, const char* where) {
  if (dim != 2 && dim != 3) throw UsageError("dimension must be 2 or 3, not " + std::to_string(dim));
  if (level < 0) throw UsageError("--level must be at least 0, not " + std::to_string(level));
  if (level > max_level(dim))
    throw UsageError("level " + std::to_string(level) + " in " + std::to_string(dim) +
                     "D is deeper than the deepest supported level, " + std::to_string(max_level(dim)) +
                     " (box indices and neighbor-link offsets are 32-bit)");
  if (particles > 0xFFFFFFFFull) throw UsageError("at most 2^32 - 1 particles are supported");
  const std::uint64_t need = tree_bytes(dim, level, particles);
  if (need > available_bytes)
    throw UsageError("level " + std::to_string(level) + " in " + std::to_string(dim) + "D needs " + gib(need) +
                     " for its box arrays (" + std::to_string(std::uint64_t(1) << (dim * level)) + " boxes, " +
                     std::to_string(full_link_count(dim, level)) + " neighbor links), more than the " +
                     gib(available_bytes) + " of " + where);
}

std::uint64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(size) : ~0ull;
}

Tree build_tree(const Particles& p, int level, const Domain& domain) {
  check_level(p.dim, level, p.size(), host_memory_bytes(), "host memory");
  return p.dim == 2 ? build<2>(p, level, domain) : build<3>(p, level, domain);
}

void build_neighbor_lists(int dim, int level, NeighborLists& full, NeighborLists& half) {
  if (dim == 2)
    build_lists<2>(level, full, half);
  else
    build_lists<3>(level, full, half);
}

}  // namespace nf
