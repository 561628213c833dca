#include "tree/level_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "tree/box_rule.h"
#include "core/errors.h"
#include "tree/neighbors.h"
#include "tree/tree.h"

namespace nf {
namespace {

template <int D>
std::uint64_t pairs_at(const LevelBoxes& h) {
  const long m = static_cast<long>(h.key.size());
  std::uint64_t pairs = 0;
#pragma omp parallel for schedule(static) reduction(+ : pairs)
  for (long k = 0; k < m; ++k) {
    std::uint32_t nb[26];
    const int n = compact_neighbors<D>(h.key.data(), static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(k),
                                       h.level, false, nb);
    std::uint64_t around = h.count[k];
    for (int j = 0; j < n; ++j) around += h.count[nb[j]];
    pairs += h.count[k] * around;
  }
  return pairs;
}

LevelCost evaluate(const LevelBoxes& h, double overhead) {
  LevelCost c;
  c.level = h.level;
  c.boxes = h.key.size();
  c.pairs = box_pairs(h);
  c.cost = static_cast<double>(c.pairs) + overhead * static_cast<double>(c.boxes);
  return c;
}

std::string fixed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void check_dim_level(int dim, int level) {
  if (dim != 2 && dim != 3) throw UsageError("dimension must be 2 or 3, not " + std::to_string(dim));
  if (level < 0 || level > max_level(dim))
    throw UsageError("level " + std::to_string(level) + " lies outside [0, " + std::to_string(max_level(dim)) + "]");
}

}  // namespace

LevelScan::LevelScan(const Particles& p, const Domain& domain, int deepest) : dim_(p.dim), deepest_(deepest) {
  check_dim_level(p.dim, deepest);
  keys_ = particle_keys(p, deepest, domain);
  std::vector<std::uint32_t> unused(keys_.size());
  radix_sort_pairs(keys_, unused, p.dim * deepest);
}

void LevelScan::boxes(int level, LevelBoxes& h) const {
  if (level < 0 || level > deepest_) throw std::logic_error("LevelScan: level outside 0..deepest");
  const int shift = dim_ * (deepest_ - level);
  h.dim = dim_;
  h.level = level;
  h.key.clear();
  h.count.clear();
  for (std::size_t s = 0; s < keys_.size(); ++s) {
    const std::uint64_t k = shift >= 64 ? 0 : keys_[s] >> shift;
    if (h.key.empty() || h.key.back() != k) {
      h.key.push_back(k);
      h.count.push_back(0);
    }
    ++h.count.back();
  }
}

std::uint64_t box_pairs(const LevelBoxes& b) { return b.dim == 2 ? pairs_at<2>(b) : pairs_at<3>(b); }

double auto_box_overhead(int dim) {
  return std::pow(3.0, dim) * AutoLevelPolicy::target_occupancy * AutoLevelPolicy::target_occupancy;
}

const LevelCost& LevelChoice::chosen() const {
  for (const LevelCost& c : evaluated)
    if (c.level == level) return c;
  throw std::logic_error("LevelChoice: the chosen level was not evaluated");
}

LevelChoice choose_level(const Particles& p, const Domain& domain, int deepest) {
  const LevelScan scan(p, domain, deepest);
  LevelChoice choice;
  choice.deepest = deepest;
  choice.dim = p.dim;
  choice.particles = p.size();
  choice.overhead = auto_box_overhead(p.dim);
  const double n = static_cast<double>(p.size());
  double best = std::numeric_limits<double>::infinity();
  LevelBoxes h;
  for (int level = 0; level <= deepest; ++level) {
    scan.boxes(level, h);
    // pairs >= N at every level and M only grows: no level from here on can beat `best`.
    if (choice.overhead * static_cast<double>(h.key.size()) + n >= best) break;
    const LevelCost c = evaluate(h, choice.overhead);
    choice.evaluated.push_back(c);
    if (c.cost < best) {
      best = c.cost;
      choice.level = level;
    }
  }
  return choice;
}

LevelCost level_cost(const Particles& p, const Domain& domain, int level) {
  LevelBoxes h;
  LevelScan(p, domain, level).boxes(level, h);
  return evaluate(h, auto_box_overhead(p.dim));
}

std::string describe(const LevelChoice& c) {
  const LevelCost& k = c.chosen();
  const double n = static_cast<double>(c.particles);
  return "level auto: " + std::to_string(c.level) + " (" + std::to_string(c.dim) + "D, N = " +
         std::to_string(c.particles) + ": " + std::to_string(k.boxes) + " non-empty boxes, " +
         fixed("%.1f", n > 0 ? static_cast<double>(k.pairs) / n : 0.0) +
         " near-field pairs per particle; rule: least pairs + " + fixed("%.0f", c.overhead) +
         " per non-empty box over levels 0.." + std::to_string(c.deepest) + ", " +
         std::to_string(c.evaluated.size()) + " evaluated)";
}

}  // namespace nf
