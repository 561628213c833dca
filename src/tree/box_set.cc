#include "tree/box_set.h"

#include <omp.h>

#include <algorithm>
#include <utility>

#include "core/chunks.h"

namespace nf {
namespace {

// Dense counting: one counter per box of the level (atomic adds), then the non-empty ones in key
// order. The counters become the compact ids, which then label the particles.
void count_dense(const Particles& p, int level, const Domain& dom, BoxSet& b,
                 std::vector<std::uint32_t>* particle_box) {
  const std::uint64_t nbox = std::uint64_t(1) << (p.dim * level);
  const long n = static_cast<long>(p.size());
  std::vector<std::uint32_t> counter(nbox, 0);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    const std::uint64_t k = particle_key(p, static_cast<std::size_t>(i), level, dom);
#pragma omp atomic update
    ++counter[k];
  }
  for (std::uint64_t k = 0; k < nbox; ++k)
    if (counter[k]) {
      b.key.push_back(k);
      b.count.push_back(counter[k]);
      counter[k] = static_cast<std::uint32_t>(b.key.size() - 1);
    }
  if (!particle_box) return;
  particle_box->resize(p.size());
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) (*particle_box)[i] = counter[particle_key(p, static_cast<std::size_t>(i), level, dom)];
}

// Sparse counting (deep levels): each thread sorts the keys of its chunk and counts their runs;
// the runs of all chunks are then merged. Particles find their box by binary search.
void count_sorted(const Particles& p, int level, const Domain& dom, BoxSet& b,
                  std::vector<std::uint32_t>* particle_box) {
  const std::vector<std::uint64_t> keys = particle_keys(p, level, dom);
  const int threads = omp_get_max_threads();
  std::vector<std::vector<std::pair<std::uint64_t, std::uint32_t>>> runs(threads);
#pragma omp parallel for schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const auto [lo, hi] = chunk_of(keys.size(), t, threads);
    std::vector<std::uint64_t> mine(keys.begin() + lo, keys.begin() + hi);
    std::sort(mine.begin(), mine.end());
    for (std::size_t i = 0; i < mine.size(); ++i)
      if (i == 0 || mine[i] != mine[i - 1])
        runs[t].push_back({mine[i], 1});
      else
        ++runs[t].back().second;
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> all;
  for (auto& r : runs) all.insert(all.end(), r.begin(), r.end());
  runs.clear();
  std::sort(all.begin(), all.end());
  for (const auto& [k, c] : all)
    if (!b.key.empty() && b.key.back() == k)
      b.count.back() += c;
    else
      b.key.push_back(k), b.count.push_back(c);
  if (!particle_box) return;
  particle_box->resize(p.size());
  const long n = static_cast<long>(p.size());
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i)
    (*particle_box)[i] =
        static_cast<std::uint32_t>(std::lower_bound(b.key.begin(), b.key.end(), keys[i]) - b.key.begin());
}

void finish(BoxSet& b) {
  b.first.assign(b.key.size() + 1, 0);
  for (std::size_t k = 0; k < b.key.size(); ++k) b.first[k + 1] = b.first[k] + b.count[k];
  NeighborLists half;  // unused: the decomposition reads the full lists
  build_compact_lists(b.dim, b.level, b.key, b.near, half);
}

}  // namespace

std::uint32_t BoxSet::max_count() const { return count.empty() ? 0 : *std::max_element(count.begin(), count.end()); }

BoxSet count_boxes(const Particles& p, int level, const Domain& domain, std::vector<std::uint32_t>* particle_box,
                   std::uint64_t dense_limit) {
  check_level(p.dim, level, p.size(), ~0ull, "memory", false);
  BoxSet b;
  b.dim = p.dim;
  b.level = level;
  if (p.dim * level < 64 && (std::uint64_t(1) << (p.dim * level)) <= dense_limit)
    count_dense(p, level, domain, b, particle_box);
  else
    count_sorted(p, level, domain, b, particle_box);
  finish(b);
  return b;
}

BoxSet box_set(const Tree& t) {
  BoxSet b;
  b.dim = t.dim;
  b.level = t.level;
  b.key = t.box_key;
  b.count.resize(t.nonempty_boxes());
  for (std::uint32_t k = 0; k < t.nonempty_boxes(); ++k) b.count[k] = t.compact_count(k);
  b.first.assign(t.box_first.begin(), t.box_first.end());
  if (b.first.empty()) b.first.push_back(0);
  b.near = t.near_full;
  return b;
}

std::uint64_t near_field_interactions(const BoxSet& b) {
  const long m = static_cast<long>(b.boxes());
  std::uint64_t total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (long k = 0; k < m; ++k) {
    const std::uint64_t n = b.count[k];
    std::uint64_t around = 0;
    for (std::uint32_t l = b.near.offset[k]; l < b.near.offset[k + 1]; ++l) around += b.count[b.near.ids[l]];
    total += n * (n - 1) + n * around;
  }
  return total;
}

}  // namespace nf
