// The decomposition over several devices (distributed/decomposition.h, exchange.h), on the CPU:
// the split by cost, halos against a brute force over box coordinates, the send/recv plan (both
// sides, particle by particle), the parts' inputs (their trees must have exactly the planned
// layout), and whole evaluations over parts in host memory through the same exchange code the
// GPUs run (host_part.h).
#include <algorithm>
#include <cmath>
#include <set>

#include "core/errors.h"
#include "distributed/decomposition.h"
#include "distributed/exchange.h"
#include "tree/box_set.h"
#include "tree/domain.h"
#include "tree/morton.h"
#include "tree/tree.h"
#include "box_inputs.h"
#include "helpers.h"
#include "host_part.h"

using namespace nf;

namespace {

// Brute force: boxes are adjacent when their coordinates differ by at most 1 along every axis.
bool adjacent(int dim, std::uint64_t a, std::uint64_t b) {
  if (a == b) return false;
  std::uint32_t ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
  if (dim == 2) {
    std::uint32_t a2[2], b2[2];
    morton_coords<2>(a, a2);
    morton_coords<2>(b, b2);
    std::copy(a2, a2 + 2, ca);
    std::copy(b2, b2 + 2, cb);
  } else {
    morton_coords<3>(a, ca);
    morton_coords<3>(b, cb);
  }
  for (int k = 0; k < dim; ++k)
    if (std::max(ca[k], cb[k]) - std::min(ca[k], cb[k]) > 1) return false;
  return true;
}

// Global sorted position of a part's local sorted position (one-GPU tree order).
std::uint64_t global_position(const BoxSet& b, const PartLayout& l, std::uint64_t s) {
  const std::size_t k = std::upper_bound(l.first.begin(), l.first.end(), s) - l.first.begin() - 1;
  return b.first[l.boxes[k]] + (s - l.first[k]);
}

void check_plan(const BoxSet& b, const Decomposition& d, const ExchangePlan& plan) {
  const int parts = d.size();
  REQUIRE(plan.parts.size() == std::size_t(parts));
  for (int g = 0; g < parts; ++g) {
    const Part& part = d.parts[g];
    const PartLayout& l = plan.parts[g].layout;
    // The layout: ascending boxes, own range where it says, offsets from the counts.
    CHECK(std::is_sorted(l.boxes.begin(), l.boxes.end()));
    CHECK(std::adjacent_find(l.boxes.begin(), l.boxes.end()) == l.boxes.end());
    REQUIRE(l.own_end - l.own_begin == part.last - part.first);
    for (std::uint32_t k = l.own_begin; k < l.own_end; ++k) CHECK(l.boxes[k] == part.first + (k - l.own_begin));
    std::set<std::uint32_t> halo(l.boxes.begin(), l.boxes.begin() + l.own_begin);
    halo.insert(l.boxes.begin() + l.own_end, l.boxes.end());
    std::set<std::uint32_t> want(part.halo.begin() + (plan.cross == CrossPairs::once ? part.upper_halo_begin : 0),
                                 part.halo.end());
    CHECK(halo == want);
    if (plan.cross == CrossPairs::once) CHECK(l.own_begin == 0);  // own boxes first
    REQUIRE(l.first.size() == l.boxes.size() + 1);
    for (std::size_t k = 0; k < l.boxes.size(); ++k) CHECK(l.first[k + 1] - l.first[k] == b.count[l.boxes[k]]);
    CHECK(l.own_last() - l.own_first() == part.own_particles);

    // Every halo particle arrives exactly once, from its box's owner.
    std::vector<int> from(l.particles(), -1);
    for (const PeerTransfer& t : plan.parts[g].peers) {
      CHECK(t.peer != g);
      for (std::uint64_t s = t.recv_begin; s < t.recv_begin + t.recv_count; ++s) {
        REQUIRE(s < l.particles());
        CHECK(from[s] == -1);
        from[s] = t.peer;
      }
    }
    for (std::size_t k = 0; k < l.boxes.size(); ++k)
      for (std::uint64_t s = l.first[k]; s < l.first[k + 1]; ++s)
        CHECK(from[s] == (k >= l.own_begin && k < l.own_end ? -1 : d.owner(l.boxes[k])));

    // Both sides agree: what g sends to q is what q receives from g, particle for particle.
    for (const PeerTransfer& t : plan.parts[g].peers) {
      const int q = t.peer;
      if (plan.cross == CrossPairs::once) CHECK((t.send.empty() || q < g));  // bodies go down, counterforces up
      const auto& qpeers = plan.parts[q].peers;
      const auto back = std::find_if(qpeers.begin(), qpeers.end(), [&](const PeerTransfer& u) { return u.peer == g; });
      REQUIRE(back != qpeers.end());
      REQUIRE(back->recv_count == t.send.size());
      CHECK(t.send.size() + t.recv_count > 0);
      for (std::size_t i = 0; i < t.send.size(); ++i) {
        CHECK(t.send[i] >= l.own_first());
        CHECK(t.send[i] < l.own_last());
        CHECK(global_position(b, l, t.send[i]) == global_position(b, plan.parts[q].layout, back->recv_begin + i));
      }
    }
  }
}

}  // namespace

TEST_CASE("split_by_cost covers the boxes in order and bounds the imbalance") {
  nf::Random r(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t m = r.below(60);
    std::vector<double> cost(m);
    for (double& c : cost) c = 1 + r.below(trial % 3 == 0 ? 1000 : 10);  // some with one heavy box
    if (m > 0 && trial % 5 == 0) cost[r.below(m)] = 1e6;
    const int parts = 1 + static_cast<int>(r.below(9));
    const auto bounds = split_by_cost(cost, parts);
    REQUIRE(bounds.size() == std::size_t(parts) + 1);
    CHECK(bounds.front() == 0);
    CHECK(bounds.back() == m);
    CHECK(std::is_sorted(bounds.begin(), bounds.end()));
    double total = 0, biggest = 0;
    for (double c : cost) total += c, biggest = std::max(biggest, c);
    for (int g = 0; g < parts; ++g) {
      double part = 0;
      for (std::uint32_t k = bounds[g]; k < bounds[g + 1]; ++k) part += cost[k];
      CHECK(part <= total / parts + biggest + 1e-9 * total);
    }
  }
  // One part is the identity; more parts than boxes leaves parts empty.
  CHECK(split_by_cost({3, 1, 2}, 1) == std::vector<std::uint32_t>{0, 3});
  const auto many = split_by_cost({1, 1}, 5);
  CHECK(many.front() == 0);
  CHECK(many.back() == 2);
  CHECK(std::count_if(many.begin(), many.end() - 1, [&](std::uint32_t v) { return v < 2; }) >= 2);
  CHECK(split_by_cost({}, 3) == std::vector<std::uint32_t>{0, 0, 0, 0});
  CHECK_THROWS_AS(split_by_cost({1}, 0), std::logic_error);
}

TEST_CASE("decompose: every box owned exactly once, halos exactly the adjacent boxes outside the range") {
  for (const test::BoxInput& c : test::box_inputs()) {
    const Domain dom = default_domain(c.p);
    const BoxSet b = count_boxes(c.p, c.level, dom);
    const std::vector<double> cost = box_costs(b);
    for (int parts : {1, 2, 3, 5, 64}) {
      CAPTURE(c.name);
      CAPTURE(parts);
      const Decomposition d = decompose(b, parts);
      REQUIRE(d.size() == parts);
      std::vector<int> owners(b.boxes(), 0);
      double total = 0;
      for (int g = 0; g < parts; ++g) {
        const Part& part = d.parts[g];
        CHECK(part.first == d.bounds[g]);
        CHECK(part.last == d.bounds[g + 1]);
        for (std::uint32_t k = part.first; k < part.last; ++k) {
          ++owners[k];
          CHECK(d.owner(k) == g);
        }
        total += part.cost;
        CHECK(part.cost <= d.total_cost / parts + d.max_box_cost + 1e-9 * d.total_cost);
        // Brute force over every box of the input.
        std::vector<std::uint32_t> halo;
        for (std::uint32_t h = 0; h < b.boxes(); ++h) {
          if (h >= part.first && h < part.last) continue;
          for (std::uint32_t k = part.first; k < part.last; ++k)
            if (adjacent(b.dim, b.key[h], b.key[k])) {
              halo.push_back(h);
              break;
            }
        }
        CHECK(part.halo == halo);
        for (std::uint32_t i = 0; i < part.halo.size(); ++i) CHECK((i >= part.upper_halo_begin) == (part.halo[i] >= part.last));
        if (parts == 1) CHECK(part.halo.empty());
      }
      CHECK(std::all_of(owners.begin(), owners.end(), [](int o) { return o == 1; }));
      CHECK(total == doctest::Approx(d.total_cost));
      if (parts == 64 && b.boxes() < 64) CHECK(std::any_of(d.parts.begin(), d.parts.end(), [](const Part& p) { return p.first == p.last; }));
    }
  }
}

TEST_CASE("exchange plan: both sides agree, halo particles arrive once from their owner; part trees match the layout") {
  for (const test::BoxInput& c : test::box_inputs()) {
    const Domain dom = default_domain(c.p);
    std::vector<std::uint32_t> particle_box;
    const BoxSet b = count_boxes(c.p, c.level, dom, &particle_box);
    const Tree whole = build_tree(c.p, c.level, dom, false);
    for (int parts : {1, 2, 4, 7}) {
      const Decomposition d = decompose(b, parts);
      for (CrossPairs cross : {CrossPairs::twice, CrossPairs::once}) {
        CAPTURE(c.name);
        CAPTURE(parts);
        CAPTURE(to_string(cross));
        const ExchangePlan plan = exchange_plan(b, d, cross);
        check_plan(b, d, plan);
        if (parts == 1) {
          CHECK(plan.parts[0].peers.empty());
          CHECK(plan.parts[0].layout.particles() == c.p.size());
        }
        const auto rows = part_rows(particle_box, plan, b.boxes());
        REQUIRE(rows.size() == std::size_t(parts));
        std::uint64_t moved = 0;
        for (int g = 0; g < parts; ++g) {
          const PartLayout& l = plan.parts[g].layout;
          // Rows: ascending, exactly the particles of the layout's boxes.
          CHECK(std::is_sorted(rows[g].begin(), rows[g].end()));
          const std::set<std::uint32_t> held(l.boxes.begin(), l.boxes.end());
          std::uint64_t expect = 0;
          for (std::size_t i = 0; i < c.p.size(); ++i) expect += held.count(particle_box[i]);
          CHECK(rows[g].size() == expect);
          for (std::uint32_t r : rows[g]) CHECK(held.count(particle_box[r]) == 1);
          // The part's own tree, over the whole input's domain, has the layout's boxes in order.
          const Particles part = select_rows(c.p, rows[g]);
          const Tree t = build_tree(part, c.level, dom, false);
          REQUIRE(t.nonempty_boxes() == l.boxes.size());
          for (std::size_t k = 0; k < l.boxes.size(); ++k) {
            CHECK(t.box_key[k] == b.key[l.boxes[k]]);
            CHECK(t.box_first[k] == l.first[k]);
          }
          // Within a box, the one-GPU tree's order (input order).
          for (std::uint64_t s = 0; s < l.particles(); ++s)
            CHECK(rows[g][t.order[s]] == whole.order[global_position(b, l, s)]);
          for (const PeerTransfer& tr : plan.parts[g].peers) moved += tr.recv_count;
        }
        CHECK(plan.moved_bodies() == moved);
        CHECK_FALSE(describe(d, plan).empty());
      }
    }
  }
}

TEST_CASE("decompose refuses zero parts; select_rows keeps positions and masses") {
  const Particles p = test::make("uniform", 3, 50);
  const BoxSet b = count_boxes(p, 2, default_domain(p));
  CHECK_THROWS_AS(decompose(b, 0), UsageError);
  const Particles s = select_rows(p, {4, 0, 49});
  REQUIRE(s.size() == 3);
  CHECK(s.dim == 3);
  CHECK(s.x[0] == p.x[4]);
  CHECK(s.z[1] == p.z[0]);
  CHECK(s.m[2] == p.m[49]);
}

// --- The evaluation over parts, on the host: the same exchange code the GPUs run ----------------
namespace {

std::vector<double> evaluate_split(const test::BoxInput& c, int parts, CrossPairs cross, std::size_t* messages = nullptr) {
  LoopbackTransport t;
  std::size_t expect = 0;
  const std::vector<double> out = test::evaluate_split(c.p, c.level, parts, cross, t, {}, &expect);
  CHECK(t.messages() == expect);
  if (messages) *messages = t.messages();
  return out;
}

}  // namespace

TEST_CASE("evaluation over parts on the host: twice equals one part bit for bit, once within 1e-12") {
  for (const test::BoxInput& c : test::box_inputs()) {
    const std::vector<double> whole = evaluate_split(c, 1, CrossPairs::twice);
    for (double v : whole) REQUIRE(std::isfinite(v));
    const std::vector<double> whole_once = evaluate_split(c, 1, CrossPairs::once);
    for (int parts : {2, 3, 5}) {
      CAPTURE(c.name);
      CAPTURE(parts);
      std::size_t messages = 0;
      const std::vector<double> twice = evaluate_split(c, parts, CrossPairs::twice, &messages);
      CHECK(twice == whole);  // same pairs, same order: bitwise (NaN would differ)
      if (c.name.rfind("uniform", 0) == 0) CHECK(messages > 0);
      const std::vector<double> once = evaluate_split(c, parts, CrossPairs::once);
      double diff = 0, norm = 0;
      for (std::size_t i = 0; i < whole.size(); ++i) {
        REQUIRE(std::isfinite(once[i]));
        diff += (once[i] - whole_once[i]) * (once[i] - whole_once[i]);
        norm += whole[i] * whole[i];
      }
      CHECK(std::sqrt(diff) <= 1e-12 * std::sqrt(norm));
      // And the Newton-3 sums agree with the full lists (a dropped or doubled pair would not).
      double diff_full = 0;
      for (std::size_t i = 0; i < whole.size(); ++i) diff_full += (once[i] - whole[i]) * (once[i] - whole[i]);
      CHECK(std::sqrt(diff_full) <= 1e-12 * std::sqrt(norm));
    }
  }
}
