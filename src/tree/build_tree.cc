#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "tree/box_rule.h"
#include "core/errors.h"
#include "tree/morton.h"
#include "tree/neighbors.h"
#include "tree/tree.h"

namespace nf {
namespace {

std::string gib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

std::string dims(int dim) { return std::to_string(dim) + "D"; }

template <int D>
std::uint64_t key_of(const Particles& p, std::size_t i, int level, const Domain& dom) {
  std::uint32_t c[D];
  for (int a = 0; a < D; ++a) c[a] = box_coordinate(p.coord(i, a), dom.origin[a], dom.side, level);
  return morton_key<D>(c);
}

template <int D>
void build_dense_lists(int level, NeighborLists& full, NeighborLists& half) {
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

// Neighbor lists over the non-empty boxes: each box's 3^D - 1 neighbor keys looked up among the
// sorted non-empty keys (the same lookup as the GPU builder's). The lookups are most of a deep
// build's time, so chunks of boxes run in parallel, each into lists of its own, which are then
// concatenated in chunk order (the result does not depend on the thread count).
template <int D>
void compact_lists(int level, const std::vector<std::uint64_t>& box_key, NeighborLists& near_full,
                   NeighborLists& near_half) {
  const std::uint32_t m = static_cast<std::uint32_t>(box_key.size());
  constexpr std::uint32_t kChunk = 4096;
  const long chunks = static_cast<long>((std::uint64_t(m) + kChunk - 1) / kChunk);
  std::vector<NeighborLists> full(chunks), half(chunks);
#pragma omp parallel for schedule(dynamic, 1)
  for (long c = 0; c < chunks; ++c) {
    const std::uint32_t first = static_cast<std::uint32_t>(c) * kChunk, last = std::min(m, first + kChunk);
    std::uint32_t nb[26];
    for (std::uint32_t k = first; k < last; ++k) {
      const int n = compact_neighbors<D>(box_key.data(), m, k, level, false, nb);
      for (int j = 0; j < n; ++j) {
        full[c].ids.push_back(nb[j]);
        if (nb[j] > k) half[c].ids.push_back(nb[j]);
      }
      full[c].offset.push_back(static_cast<std::uint32_t>(full[c].ids.size()));
      half[c].offset.push_back(static_cast<std::uint32_t>(half[c].ids.size()));
    }
  }
  auto concatenate = [m](std::vector<NeighborLists>& parts, NeighborLists& out) {
    std::size_t links = 0;
    for (const NeighborLists& l : parts) links += l.ids.size();
    out.offset.assign(1, 0);
    out.offset.reserve(std::size_t(m) + 1);
    out.ids.clear();
    out.ids.reserve(links);
    for (NeighborLists& l : parts) {
      const std::uint32_t base = static_cast<std::uint32_t>(out.ids.size());
      for (std::uint32_t o : l.offset) out.offset.push_back(base + o);
      out.ids.insert(out.ids.end(), l.ids.begin(), l.ids.end());
      l = NeighborLists{};
    }
  };
  concatenate(full, near_full);
  concatenate(half, near_half);
}

// The paper's arrays over all boxes, from the compact ones: box_start[b] is the first particle
// whose key is >= b.
template <int D>
void build_dense(Tree& t, const std::vector<std::uint64_t>& sorted_keys) {
  const std::uint32_t nbox = static_cast<std::uint32_t>(t.nbox), m = t.nonempty_boxes();
  const std::uint32_t n = static_cast<std::uint32_t>(t.particles());
  t.box_start.assign(std::size_t(nbox) + 1, n);
  std::uint32_t k = 0;
  for (std::uint32_t b = 0; b < nbox; ++b) {
    while (k < m && t.box_key[k] < b) ++k;
    t.box_start[b] = k < m ? t.box_first[k] : n;
  }
  t.particle_box.assign(sorted_keys.begin(), sorted_keys.end());
  t.nonempty.assign(t.box_key.begin(), t.box_key.end());
  build_dense_lists<D>(t.level, t.full, t.half);
}

template <int D>
Tree build(const Particles& p, int level, const Domain& dom, bool dense) {
  Tree t;
  t.dim = D;
  t.level = level;
  t.domain = dom;
  t.nbox = std::uint64_t(1) << (D * level);
  t.dense = dense;
  const std::size_t n = p.size();

  std::vector<std::uint64_t> key = particle_keys(p, level, dom);
  t.order.resize(n);
  for (std::size_t i = 0; i < n; ++i) t.order[i] = static_cast<std::uint32_t>(i);
  radix_sort_pairs(key, t.order, D * level);

  // Runs of equal keys are the non-empty boxes.
  t.particle_compact_box.resize(n);
  t.box_first.push_back(0);
  for (std::size_t s = 0; s < n; ++s) {
    if (s == 0 || key[s] != key[s - 1]) {
      t.box_key.push_back(key[s]);
      if (s > 0) t.box_first.push_back(static_cast<std::uint32_t>(s));
    }
    t.particle_compact_box[s] = static_cast<std::uint32_t>(t.box_key.size() - 1);
  }
  if (n > 0) t.box_first.push_back(static_cast<std::uint32_t>(n));
  t.box_key.shrink_to_fit();
  t.box_first.shrink_to_fit();
  compact_lists<D>(level, t.box_key, t.near_full, t.near_half);
  if (dense) build_dense<D>(t, key);
  return t;
}

}  // namespace

std::uint32_t Tree::max_box_count() const {
  std::uint32_t m = 0;
  for (std::uint32_t k = 0; k < nonempty_boxes(); ++k) m = std::max(m, compact_count(k));
  return m;
}

std::uint32_t Tree::min_box_count() const {
  if (nonempty_boxes() < nbox) return 0;
  std::uint32_t m = compact_count(0);
  for (std::uint32_t k = 1; k < nonempty_boxes(); ++k) m = std::min(m, compact_count(k));
  return m;
}

std::uint64_t Tree::heap_bytes() const {
  auto bytes = [](const auto& v) { return std::uint64_t(v.capacity()) * sizeof(v[0]); };
  auto lists = [&](const NeighborLists& l) { return bytes(l.offset) + bytes(l.ids); };
  return bytes(order) + bytes(box_key) + bytes(box_first) + bytes(particle_compact_box) + lists(near_full) +
         lists(near_half) + bytes(box_start) + bytes(particle_box) + bytes(nonempty) + lists(full) + lists(half);
}

std::uint64_t full_link_count(int dim, int level) {
  const std::uint64_t n = std::uint64_t(1) << level, m = 3 * n - 2;
  return dim == 2 ? m * m - n * n : m * m * m - n * n * n;
}

std::string full_link_count_text(int dim, int level, bool half) {
  __extension__ using u128 = unsigned __int128;
  const u128 n = u128(1) << level, m = 3 * n - 2;
  u128 b = dim == 2 ? m * m - n * n : m * m * m - n * n * n;
  if (half) b /= 2;  // B is even: each link has its reverse
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(b % 10)));
    b /= 10;
  } while (b != 0);
  return digits;
}

double tree_bytes(int dim, int level, std::uint64_t particles, bool dense, bool lists) {
  const double n = static_cast<double>(particles), nbox = std::ldexp(1.0, dim * level);
  const double boxes = std::min(n, nbox);                 // non-empty boxes, at most
  const double links = (dim == 2 ? 8.0 : 26.0) * boxes;  // between non-empty boxes, at most
  // Per particle: order, compact box, key, and the sort's second key and index buffers; per non-empty
  // box: key, first, and with the lists two offsets and their full + half ids.
  double bytes = 28.0 * n + 12.0 * boxes + (lists ? 8.0 * boxes + 6.0 * links : 0.0);
  if (dense) {
    const double b = (std::pow(3.0 * std::ldexp(1.0, level) - 2.0, dim) - std::pow(std::ldexp(1.0, level), dim));
    // box_start, nonempty, two offset arrays; full + half ids; particle_box.
    bytes += 16.0 * nbox + 6.0 * b + 4.0 * n;
  }
  return bytes;
}

void check_level(int dim, int level, std::uint64_t particles, std::uint64_t available_bytes, const char* where,
                 bool dense) {
  if (dim != 2 && dim != 3) throw UsageError("dimension must be 2 or 3, not " + std::to_string(dim));
  if (level < 0) throw UsageError("--level must be at least 0, not " + std::to_string(level));
  if (level > max_level(dim))
    throw UsageError("level " + std::to_string(level) + " in " + dims(dim) +
                     " is deeper than the deepest supported level, " + std::to_string(max_level(dim)) +
                     " (Morton keys are 64-bit)");
  if (particles > 0xFFFFFFFFull) throw UsageError("at most 2^32 - 1 particles are supported");
  const double need = tree_bytes(dim, level, particles, dense);
  const std::string boxes = "2^" + std::to_string(dim * level) + " boxes";
  if (dense && level > max_dense_level(dim))
    throw UsageError("level " + std::to_string(level) + " in " + dims(dim) +
                     ": the dense box arrays (boxIdx and neighbor lists over all " + boxes + ", " +
                     full_link_count_text(dim, level) + " neighbor links) would need " + gib(need) +
                     ", and their 32-bit box indices hold at most level " + std::to_string(max_dense_level(dim)) +
                     "; kernels that read the compact layout go to level " + std::to_string(max_level(dim)));
  const double max_links = (dim == 2 ? 8.0 : 26.0) * std::min<double>(static_cast<double>(particles), std::ldexp(1.0, dim * level));
  if (max_links > 4294967295.0)
    throw UsageError("level " + std::to_string(level) + " in " + dims(dim) + " with " + std::to_string(particles) +
                     " particles could need more neighbor links than 32-bit offsets hold");
  if (need > static_cast<double>(available_bytes))
    throw UsageError("level " + std::to_string(level) + " in " + dims(dim) + " needs " + gib(need) + " for its " +
                     (dense ? "dense and compact box arrays (" + boxes + ", " + full_link_count_text(dim, level) +
                                  " neighbor links)"
                            : std::string("compact box arrays")) +
                     ", more than the " + gib(static_cast<double>(available_bytes)) + " of " + where);
}

std::uint64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(size) : ~0ull;
}

std::uint64_t particle_key(const Particles& p, std::size_t i, int level, const Domain& domain) {
  return p.dim == 2 ? key_of<2>(p, i, level, domain) : key_of<3>(p, i, level, domain);
}

std::vector<std::uint64_t> particle_keys(const Particles& p, int level, const Domain& domain) {
  std::vector<std::uint64_t> key(p.size());
  const long n = static_cast<long>(p.size());
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) key[i] = p.dim == 2 ? key_of<2>(p, i, level, domain) : key_of<3>(p, i, level, domain);
  return key;
}

void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values, int bits) {
  const std::size_t n = keys.size();
  if (bits <= 0 || n < 2) return;
  // One pass for up to 16 bits (a level-8 quadtree), else digits of at most 11 bits.
  const int passes = bits <= 16 ? 1 : (bits + 10) / 11;
  const int width = (bits + passes - 1) / passes;
  const std::uint64_t mask = (std::uint64_t(1) << width) - 1;
  std::vector<std::uint64_t> k2(n);
  std::vector<std::uint32_t> v2(n);
  std::vector<std::size_t> count(std::size_t(1) << width);
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * width;
    std::fill(count.begin(), count.end(), 0);
    for (std::uint64_t k : keys) ++count[(k >> shift) & mask];
    if (count[(keys[0] >> shift) & mask] == n) continue;  // one digit value: this pass would copy
    std::size_t sum = 0;
    for (std::size_t& c : count) {
      const std::size_t c0 = c;
      c = sum;
      sum += c0;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = count[(keys[i] >> shift) & mask]++;
      k2[at] = keys[i];
      v2[at] = values[i];
    }
    keys.swap(k2);
    values.swap(v2);
  }
}

Tree build_tree(const Particles& p, int level, const Domain& domain, bool dense) {
  check_level(p.dim, level, p.size(), host_memory_bytes(), "host memory", dense);
  return p.dim == 2 ? build<2>(p, level, domain, dense) : build<3>(p, level, domain, dense);
}

void build_compact_lists(int dim, int level, const std::vector<std::uint64_t>& box_key, NeighborLists& near_full,
                         NeighborLists& near_half) {
  if (dim == 2)
    compact_lists<2>(level, box_key, near_full, near_half);
  else
    compact_lists<3>(level, box_key, near_full, near_half);
}

void build_neighbor_lists(int dim, int level, NeighborLists& full, NeighborLists& half) {
  if (level > max_dense_level(dim)) throw UsageError("dense neighbor lists stop at level " + std::to_string(max_dense_level(dim)));
  if (dim == 2)
    build_dense_lists<2>(level, full, half);
  else
    build_dense_lists<3>(level, full, half);
}

}  // namespace nf
