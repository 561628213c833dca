#include "distributed/decomposition.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>

#include "core/chunks.h"
#include "core/errors.h"

namespace nf {

std::vector<double> box_costs(const BoxSet& b) {
  std::vector<double> cost(b.boxes());
  const long m = static_cast<long>(b.boxes());
#pragma omp parallel for schedule(static)
  for (long k = 0; k < m; ++k) {
    std::uint64_t around = 0;
    for (std::uint32_t l = b.near.offset[k]; l < b.near.offset[k + 1]; ++l) around += b.count[b.near.ids[l]];
    cost[k] = static_cast<double>(b.count[k]) * static_cast<double>(b.count[k] + around);
  }
  return cost;
}

std::vector<std::uint32_t> split_by_cost(const std::vector<double>& cost, int parts) {
  if (parts < 1) throw std::logic_error("split_by_cost: parts must be at least 1");
  const std::size_t m = cost.size();
  std::vector<double> prefix(m + 1, 0.0);
  for (std::size_t k = 0; k < m; ++k) prefix[k + 1] = prefix[k] + cost[k];
  const double total = prefix[m];
  std::vector<std::uint32_t> bounds(parts + 1, 0);
  bounds[parts] = static_cast<std::uint32_t>(m);
  for (int g = 1; g < parts; ++g) {
    const double target = total * g / parts;
    std::size_t k = std::lower_bound(prefix.begin() + bounds[g - 1], prefix.end(), target) - prefix.begin();
    k = std::min(k, m);
    // prefix[k - 1] < target <= prefix[k]: take the nearer of the two (ties: the lower one).
    if (k > bounds[g - 1] && target - prefix[k - 1] <= prefix[k] - target) --k;
    bounds[g] = static_cast<std::uint32_t>(k);
  }
  return bounds;
}

const char* to_string(CrossPairs c) {
  return c == CrossPairs::twice ? "twice" : c == CrossPairs::once ? "once" : "auto";
}

CrossPairs parse_cross_pairs(const std::string& text) {
  if (text == "auto") return CrossPairs::automatic;
  if (text == "twice") return CrossPairs::twice;
  if (text == "once") return CrossPairs::once;
  throw UsageError("--cross-pairs must be auto, once or twice, not '" + text + "'");
}

int Decomposition::owner(std::uint32_t b) const {
  // The last part whose first box is <= b (empty parts share their boundary with the next one).
  const auto it = std::upper_bound(bounds.begin(), bounds.end() - 1, b);
  return static_cast<int>(it - bounds.begin()) - 1;
}

Decomposition decompose(const BoxSet& b, int parts) {
  if (parts < 1) throw UsageError("the number of GPUs must be at least 1, not " + std::to_string(parts));
  const std::vector<double> cost = box_costs(b);
  Decomposition d;
  d.bounds = split_by_cost(cost, parts);
  d.parts.resize(parts);
  for (double c : cost) d.total_cost += c, d.max_box_cost = std::max(d.max_box_cost, c);
  const int threads = omp_get_max_threads();
  for (int g = 0; g < parts; ++g) {
    Part& part = d.parts[g];
    part.first = d.bounds[g];
    part.last = d.bounds[g + 1];
    part.own_particles = b.first[part.last] - b.first[part.first];
    for (std::uint32_t k = part.first; k < part.last; ++k) part.cost += cost[k];
    // Neighbors outside the range, collected per thread over chunks of the own boxes.
    std::vector<std::vector<std::uint32_t>> found(threads);
    const std::size_t own = part.last - part.first;
#pragma omp parallel for schedule(static, 1)
    for (int t = 0; t < threads; ++t) {
      const auto [lo, hi] = chunk_of(own, t, threads);
      for (std::size_t k = part.first + lo; k < part.first + hi; ++k)
        for (std::uint32_t l = b.near.offset[k]; l < b.near.offset[k + 1]; ++l) {
          const std::uint32_t c = b.near.ids[l];
          if (c < part.first || c >= part.last) found[t].push_back(c);
        }
    }
    for (const auto& f : found) part.halo.insert(part.halo.end(), f.begin(), f.end());
    std::sort(part.halo.begin(), part.halo.end());
    part.halo.erase(std::unique(part.halo.begin(), part.halo.end()), part.halo.end());
    part.upper_halo_begin =
        static_cast<std::uint32_t>(std::lower_bound(part.halo.begin(), part.halo.end(), part.last) - part.halo.begin());
  }
  return d;
}

std::uint64_t ExchangePlan::moved_bodies() const {
  std::uint64_t n = 0;
  for (const PartPlan& p : parts)
    for (const PeerTransfer& t : p.peers) n += t.recv_count;
  return n;
}

ExchangePlan exchange_plan(const BoxSet& b, const Decomposition& d, CrossPairs cross) {
  if (cross == CrossPairs::automatic) throw std::logic_error("exchange_plan: resolve CrossPairs::automatic first");
  const int parts = d.size();
  ExchangePlan plan;
  plan.cross = cross;
  plan.parts.resize(parts);
  // Layouts: the halo boxes this way of computing needs, below and above the own range.
  for (int g = 0; g < parts; ++g) {
    const Part& part = d.parts[g];
    PartLayout& l = plan.parts[g].layout;
    const std::uint32_t halo_begin = cross == CrossPairs::once ? part.upper_halo_begin : 0;
    const auto below_end = part.halo.begin() + part.upper_halo_begin;
    l.boxes.assign(part.halo.begin() + halo_begin, below_end);
    l.own_begin = static_cast<std::uint32_t>(l.boxes.size());
    for (std::uint32_t k = part.first; k < part.last; ++k) l.boxes.push_back(k);
    l.own_end = static_cast<std::uint32_t>(l.boxes.size());
    l.boxes.insert(l.boxes.end(), below_end, part.halo.end());
    l.first.assign(l.boxes.size() + 1, 0);
    for (std::size_t k = 0; k < l.boxes.size(); ++k) l.first[k + 1] = l.first[k] + b.count[l.boxes[k]];
  }
  // Transfers: each halo box comes from its owner. A peer's boxes are consecutive in the layout,
  // so they arrive as one range; the owner gathers them from its own boxes.
  std::vector<std::map<int, PeerTransfer>> peers(parts);
  for (int g = 0; g < parts; ++g) {
    const PartLayout& l = plan.parts[g].layout;
    for (std::uint32_t k = 0; k < l.boxes.size(); ++k) {
      if (k == l.own_begin) k = l.own_end;  // own boxes come from no one
      if (k >= l.boxes.size()) break;
      const std::uint32_t box = l.boxes[k];
      const int q = d.owner(box);
      PeerTransfer& in = peers[g][q];
      in.peer = q;
      if (in.recv_count == 0) in.recv_begin = l.first[k];
      if (in.recv_begin + in.recv_count != l.first[k])
        throw std::logic_error("exchange_plan: the halo boxes of one peer are not consecutive");
      in.recv_count += b.count[box];
      const PartLayout& ql = plan.parts[q].layout;
      const std::uint32_t local = ql.own_begin + (box - d.parts[q].first);
      PeerTransfer& out = peers[q][g];
      out.peer = g;
      for (std::uint64_t s = ql.first[local]; s < ql.first[local + 1]; ++s)
        out.send.push_back(static_cast<std::uint32_t>(s));
    }
  }
  for (int g = 0; g < parts; ++g)
    for (auto& [q, t] : peers[g]) plan.parts[g].peers.push_back(std::move(t));
  return plan;
}

std::vector<std::vector<std::uint32_t>> part_rows(const std::vector<std::uint32_t>& particle_box,
                                                  const ExchangePlan& plan, std::uint32_t boxes) {
  const int parts = static_cast<int>(plan.parts.size());
  // The parts holding each box (its owner and the parts with it in their halo), ascending.
  std::vector<std::uint32_t> offset(std::size_t(boxes) + 1, 0);
  for (const PartPlan& p : plan.parts)
    for (std::uint32_t b : p.layout.boxes) ++offset[b + 1];
  for (std::uint32_t b = 0; b < boxes; ++b) offset[b + 1] += offset[b];
  std::vector<std::uint32_t> holder(offset[boxes]);
  {
    std::vector<std::uint32_t> at(offset.begin(), offset.end() - 1);
    for (int g = 0; g < parts; ++g)
      for (std::uint32_t b : plan.parts[g].layout.boxes) holder[at[b]++] = static_cast<std::uint32_t>(g);
  }
  // Count per (thread chunk, part), then fill: rows stay ascending within each part.
  const std::size_t n = particle_box.size();
  const int threads = omp_get_max_threads();
  std::vector<std::uint64_t> count(std::size_t(threads) * parts, 0);
#pragma omp parallel for schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const auto [lo, hi] = chunk_of(n, t, threads);
    for (std::size_t i = lo; i < hi; ++i) {
      const std::uint32_t b = particle_box[i];
      for (std::uint32_t h = offset[b]; h < offset[b + 1]; ++h) ++count[std::size_t(t) * parts + holder[h]];
    }
  }
  std::vector<std::vector<std::uint32_t>> rows(parts);
  for (int g = 0; g < parts; ++g) {
    std::uint64_t total = 0;
    for (int t = 0; t < threads; ++t) {
      const std::uint64_t c = count[std::size_t(t) * parts + g];
      count[std::size_t(t) * parts + g] = total;
      total += c;
    }
    if (total != plan.parts[g].layout.particles())
      throw std::logic_error("part_rows: part " + std::to_string(g) + " has " + std::to_string(total) +
                             " particles, its layout " + std::to_string(plan.parts[g].layout.particles()));
    rows[g].resize(total);
  }
#pragma omp parallel for schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const auto [lo, hi] = chunk_of(n, t, threads);
    for (std::size_t i = lo; i < hi; ++i) {
      const std::uint32_t b = particle_box[i];
      for (std::uint32_t h = offset[b]; h < offset[b + 1]; ++h) {
        const std::uint32_t g = holder[h];
        rows[g][count[std::size_t(t) * parts + g]++] = static_cast<std::uint32_t>(i);
      }
    }
  }
  return rows;
}

Particles select_rows(const Particles& p, const std::vector<std::uint32_t>& rows) {
  Particles out;
  out.dim = p.dim;
  out.resize(rows.size());
  const long n = static_cast<long>(rows.size());
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    const std::uint32_t r = rows[i];
    out.x[i] = p.x[r];
    out.y[i] = p.y[r];
    if (p.dim == 3) out.z[i] = p.z[r];
    out.m[i] = p.m[r];
  }
  return out;
}

std::string describe(const Decomposition& d, const ExchangePlan& plan) {
  std::string s = std::to_string(d.size()) + " parts (cross pairs " + to_string(plan.cross) + "):";
  double worst = 0;
  for (int g = 0; g < d.size(); ++g) {
    const Part& p = d.parts[g];
    const PartLayout& l = plan.parts[g].layout;
    s += " [" + std::to_string(g) + "] boxes " + std::to_string(p.first) + ".." + std::to_string(p.last) + ", " +
         std::to_string(p.own_particles) + " particles + " + std::to_string(l.particles() - p.own_particles) + " halo;";
    worst = std::max(worst, p.cost);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, " cost max/mean %.4f", d.total_cost > 0 ? worst * d.size() / d.total_cost : 1.0);
  return s + buf;
}

}  // namespace nf
