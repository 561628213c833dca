#include "tree/level_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "tree/box_rule.h"
#include "core/errors.h"
#include "tree/neighbors.h"
#include "tree/tree.h"

namespace nf {
namespace {

template <int D>
std::uint64_t pairs_at(const LevelBoxes& h, std::uint64_t* links_out) {
  const long m = static_cast<long>(h.key.size());
  std::uint64_t pairs = 0, links = 0;
#pragma omp parallel for schedule(static) reduction(+ : pairs, links)
  for (long k = 0; k < m; ++k) {
    std::uint32_t nb[26];
    const int n = compact_neighbors<D>(h.key.data(), static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(k),
                                       h.level, false, nb);
    std::uint64_t around = h.count[k];
    for (int j = 0; j < n; ++j) around += h.count[nb[j]];
    pairs += h.count[k] * around;
    links += 1 + std::uint64_t(n);
  }
  if (links_out) *links_out = links;
  return pairs;
}

LevelCost evaluate(const LevelBoxes& h, double overhead, const KernelCostModel* model) {
  LevelCost c;
  c.level = h.level;
  c.boxes = h.key.size();
  c.pairs = box_pairs(h, &c.links);
  c.cost = model ? model->cost(h.dim, h.level, static_cast<double>(c.pairs), static_cast<double>(c.boxes),
                               static_cast<double>(c.links))
                 : static_cast<double>(c.pairs) + overhead * static_cast<double>(c.boxes);
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

std::uint64_t box_pairs(const LevelBoxes& b, std::uint64_t* links) {
  return b.dim == 2 ? pairs_at<2>(b, links) : pairs_at<3>(b, links);
}

double auto_box_overhead(int dim) {
  return std::pow(3.0, dim) * AutoLevelPolicy::target_occupancy * AutoLevelPolicy::target_occupancy;
}

const LevelCost& LevelChoice::chosen() const {
  for (const LevelCost& c : evaluated)
    if (c.level == level) return c;
  throw std::logic_error("LevelChoice: the chosen level was not evaluated");
}

double KernelCostModel::cost(int dim, int level, double pairs, double boxes, double links) const {
  // The tree method's own price of a box (the generic rule's c, in this kernel's pairs): without
  // it the near field alone is cheapest where every particle sits alone in its box.
  const double tree = auto_box_overhead(dim) * pair_s * boxes;
  if (all_boxes) {
    boxes = std::ldexp(1.0, dim * level);
    links = boxes + static_cast<double>(full_link_count(dim, level));
  }
  return pair_s * pairs + box_s * boxes + link_s * links + tree;
}

LevelChoice choose_level(const Particles& p, const Domain& domain, int deepest, const KernelCostModel* model) {
  const LevelScan scan(p, domain, deepest);
  return choose_level(scan, deepest, model);
}

LevelChoice choose_level(const LevelScan& scan, int deepest, const KernelCostModel* model) {
  if (deepest > scan.deepest()) throw std::logic_error("choose_level: deeper than the scan");
  LevelChoice choice;
  choice.deepest = deepest;
  choice.dim = scan.dim();
  choice.particles = scan.particles();
  choice.overhead = auto_box_overhead(scan.dim());
  choice.model = model;
  const double n = static_cast<double>(scan.particles());
  double best = std::numeric_limits<double>::infinity();
  LevelBoxes h;
  for (int level = 0; level <= deepest; ++level) {
    scan.boxes(level, h);
    // pairs >= N at every level and M only grows: no level from here on can beat `best`.
    const double boxes = static_cast<double>(h.key.size());
    const double floor = model ? model->cost(scan.dim(), level, n, boxes, boxes)
                               : choice.overhead * static_cast<double>(h.key.size()) + n;
    if (floor >= best) break;
    const LevelCost c = evaluate(h, choice.overhead, model);
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
  return evaluate(h, auto_box_overhead(p.dim), nullptr);
}

std::string describe(const LevelChoice& c) {
  const LevelCost& k = c.chosen();
  const double n = static_cast<double>(c.particles);
  return "level auto: " + std::to_string(c.level) + " (" + std::to_string(c.dim) + "D, N = " +
         std::to_string(c.particles) + ": " + std::to_string(k.boxes) + " non-empty boxes, " +
         fixed("%.1f", n > 0 ? static_cast<double>(k.pairs) / n : 0.0) +
         " near-field pairs per particle; rule: " +
         (c.model ? "least pairs + " + fixed("%.0f", c.overhead) + " per non-empty box in " + c.model->kernel +
                        "'s modelled time (" + fixed("%.3g", c.model->pair_s * 1e12) +
                        " ps a pair, " + fixed("%.3g", c.model->box_s * 1e12) + " ps a box, " +
                        fixed("%.3g", c.model->link_s * 1e12) + " ps a link" +
                        (c.model->all_boxes ? " of the dense layout" : "") + ": " + fixed("%.3g", k.cost * 1e3) +
                        " ms)"
                  : "least pairs + " + fixed("%.0f", c.overhead) + " per non-empty box") +
         " over levels 0.." + std::to_string(c.deepest) + ", " + std::to_string(c.evaluated.size()) + " evaluated)";
}

}  // namespace nf
