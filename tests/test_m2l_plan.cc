// The sibling-group M2L kernel's plans (farfield/m2l_group_plan.h), on the CPU: for the whole
// table and for slices of its row quads (the orders whose table does not fit in shared memory),
// every column of every covered quad is summed by exactly one unit (pieces of a quad interleave its
// columns), the slowest warp's columns at each offset order stay near the mean, the packed quad index is
// relative to the plan's first quad and fits its 8 bits, and the table offset is relative to the
// first quad's entries. The tensor-core kernel's plans over row tiles and its index map: every
// k-step of every tile summed once, and the map's entries, read as the kernel reads them, give the
// truncated M2L sums of a float64 evaluation at every order an offset takes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "farfield/m2l_group_plan.h"

namespace ff = nf::farfield;
namespace mp = nf::farfield::m2l_plan;

namespace {

// Checks a plan of `warps` warps of U units each over quads.first .. quads.last - 1, its quads'
// columns dealt out in chunks of `chunk` (0: contiguous pieces).
template <int D>
void check_plan(const mp::Quads<D>& quads, const std::vector<int>& plan, int warps, int U, int chunk = mp::kGroupChunk) {
  REQUIRE(warps > 0);
  CHECK(warps <= mp::kMaxWarps);
  REQUIRE(plan.size() == std::size_t(2) * warps * U);
  std::map<int, std::vector<int>> covered;  // quad -> how many units sum each column
  for (int q = quads.first; q < quads.last; ++q) covered[q].assign(std::size_t(quads.columns[std::size_t(q)]), 0);
  for (std::size_t slot = 0; slot < plan.size() / 2; ++slot) {
    const int unit = plan[2 * slot], first = plan[2 * slot + 1];
    const int q = (unit & 0xff) + quads.first, n0 = (unit >> 8) & 0xfff, n1 = (unit >> 20) & 0xfff;
    if (n1 == n0) continue;  // an empty unit
    REQUIRE(q < quads.last);
    CHECK((first & 0xfffff) == quads.start[std::size_t(q)] - quads.start[std::size_t(quads.first)]);
    CHECK((first >> 26) == quads.degree[std::size_t(q)]);
    const int stride = ((first >> 20) & 0x3f) + 1;
    if (chunk == 0) {  // contiguous pieces
      CHECK(stride == 1);
      for (int n = n0; n < n1; ++n) ++covered[q].at(std::size_t(n));
      continue;
    }
    CHECK((stride == 1 || n0 < stride * chunk));  // dealt-out pieces begin at their chunk within the quad
    for (int c = n0; c < n1; c += stride * chunk)
      for (int n = c; n < std::min(c + chunk, n1); ++n) ++covered[q].at(std::size_t(n));
  }
  for (const auto& [q, counts] : covered)
    for (int c : counts) CHECK(c == 1);
}

}  // namespace

TEST_CASE("M2L group plans: the whole table and slices of its row quads cover every column once") {
  constexpr int D = 3, U = 10;  // one target a lane: kUnits<1>
  for (int p : {8, 13, 14, 18}) {
    CAPTURE(p);
    const mp::Quads<D> quads(p);
    const auto classes = mp::order_classes<D>(ff::offset_orders(D, p));
    const int count = int(quads.columns.size());
    std::vector<int> plan;
    if (count <= mp::kMaxWarps * U) {  // the whole table in one plan
      const int w = mp::best_plan<D>(quads, classes, U, plan, mp::kGroupChunk);
      check_plan(quads, plan, w, U);
      const int w0 = mp::best_plan<D>(quads, classes, U, plan, 0);  // double's contiguous pieces
      check_plan(quads, plan, w0, U, 0);
      if (p == 8) {  // the contiguous plan needs about 1.25 quads' units a warp: up to p = 12
        const int c = mp::contiguous_plan<D>(quads, U, plan);
        check_plan(quads, plan, c, U);
      }
    }
    // Slices of at most kMaxWarps x U quads, the last ones' packed indices relative to their first.
    for (int slices : {2, 3, 5}) {
      CAPTURE(slices);
      if (count > slices * mp::kMaxWarps * U) continue;  // too few slices for this order's quads
      int covered = 0;
      for (int s = 0; s < slices; ++s) {
        const int q0 = count * s / slices, q1 = count * (s + 1) / slices;
        REQUIRE(q1 - q0 <= mp::kMaxWarps * U);
        const mp::Quads<D> part = quads.range(q0, q1);
        const int w = mp::best_plan<D>(part, classes, U, plan, mp::kGroupChunk);
        check_plan(part, plan, w, U);
        covered += q1 - q0;
      }
      CHECK(covered == count);
    }
  }
}

TEST_CASE("M2L plans: pieces dealt out by chunk keep every offset order's slowest warp near the mean") {
  // An offset of order o < p sums only the first columns of a quad; a quad cut into pieces of
  // contiguous columns had left them to one warp (3D p = 12, 8-row tiles, 5 units a warp: 91 columns
  // for the slowest warp against a mean of 18 at order 7). Pieces dealt out chunk by chunk share them
  // out where the warps have units to spare for them (not at 3D p = 11 with two targets a lane: 91
  // quads for 96 units, 94 columns an offset for the slowest warp against a mean of 71). Chunks of
  // the group kernel's 4 columns, and of the tensor-core kernel's 1 k-step (16-row tiles, 4 units; at
  // p = 14: at 16, 61 tiles for 64 units leave nothing to deal out).
  double worst = 0;  // contiguous pieces' largest load over the bound
  auto check = [&](auto dim, int p, int rows, int U, int chunk = mp::kGroupChunk) {
    constexpr int D = decltype(dim)::value;
    CAPTURE(D);
    CAPTURE(p);
    CAPTURE(rows);
    CAPTURE(chunk);
    const mp::Quads<D> quads = chunk == 1 ? mp::Quads<D>(p, 16, 8, 1) : mp::Quads<D>(p, rows, 1, rows);
    const auto classes = mp::order_classes<D>(ff::offset_orders(D, p));
    std::vector<int> plan;
    const int w = mp::best_plan<D>(quads, classes, U, plan, chunk);
    REQUIRE(w > 0);
    check_plan(quads, plan, w, U, chunk);
    for (const auto& order_class : classes) {
      const int order = order_class.first;  // (a structured binding cannot be captured in C++17)
      CAPTURE(order);
      double most = 0, sum = 0;
      for (int warp = 0; warp < w; ++warp) {
        double load = 0;
        for (int v = 0; v < U; ++v) {
          const int unit = plan[std::size_t(2 * (warp * U + v))], first = plan[std::size_t(2 * (warp * U + v) + 1)];
          const int q = unit & 0xff, n0 = (unit >> 8) & 0xfff, n1 = (unit >> 20) & 0xfff;
          if (n1 == n0) continue;
          load += mp::dealt_columns(n0, n1, ((first >> 20) & 0x3f) + 1, chunk, quads.columns_at(q, order));
        }
        most = std::max(most, load), sum += load;
      }
      // within 1.5x the mean and a few columns (a warp's units hold whole columns of a quad);
      // contiguous pieces (chunk 0) pass it at no order where dealing was needed
      if (chunk > 0) CHECK(most <= 1.5 * sum / w + 8);
      else worst = std::max(worst, most / (1.5 * sum / w + 8));
    }
  };
  check(std::integral_constant<int, 3>{}, 12, 8, 5);
  check(std::integral_constant<int, 3>{}, 10, 4, 6);
  check(std::integral_constant<int, 3>{}, 8, 4, 10);
  check(std::integral_constant<int, 2>{}, 14, 8, 5);
  check(std::integral_constant<int, 2>{}, 16, 8, 5);
  check(std::integral_constant<int, 3>{}, 14, 16, 4, 1);
  // The bound tells the two apart: contiguous pieces at 3D p = 12 and 10 pass it by far (91 columns
  // for the slowest warp against a mean of 18 at p = 12, order 7).
  check(std::integral_constant<int, 3>{}, 12, 8, 5, 0);
  CHECK(worst > 2.0);
  worst = 0;
  check(std::integral_constant<int, 3>{}, 10, 4, 6, 0);
  CHECK(worst > 1.3);
}

TEST_CASE("M2L group plans with two quads a unit: 8-row tiles hold every row's columns, plans cover each once") {
  for (int p : {3, 6, 8, 9, 10, 11, 12}) {
    CAPTURE(p);
    auto check = [&](auto dim) {
      constexpr int D = decltype(dim)::value;
      const mp::Quads<D> tiles(p, 8, 1, 8);
      const int t = ff::terms<D>(p);
      REQUIRE(int(tiles.columns.size()) == (t + 7) / 8);
      int at = 0;
      for (std::size_t q = 0; q < tiles.columns.size(); ++q) {
        CHECK(tiles.start[q] == at);  // 8 entries a column, side by side
        at += 8 * tiles.columns[q];
        CHECK(tiles.degree[q] == ff::multi_index<D>(8 * int(q)).degree());
        for (int j = 0; j < 8 && 8 * int(q) + j < t; ++j)  // each row's columns |n| <= p - |k| lie within the tile's
          CHECK(ff::terms<D>(p - ff::multi_index<D>(8 * int(q) + j).degree()) <= tiles.columns[q]);
      }
      CHECK(tiles.table_size == at);
      CHECK(at % 4 == 0);  // the kernel's 16-byte copies
      const auto classes = mp::order_classes<D>(ff::offset_orders(D, p));
      for (int U : {3, 5}) {  // kUnits<2, 8>, kUnits<1, 8>
        CAPTURE(U);
        std::vector<int> plan;
        const int w = mp::best_plan<D>(tiles, classes, U, plan, mp::kGroupChunk);
        if (int(tiles.columns.size()) > mp::kMaxWarps * U) {  // more tiles than units (3D p = 12 at U = 3)
          CHECK(w == 0);
          continue;
        }
        check_plan(tiles, plan, w, U);
      }
    };
    check(std::integral_constant<int, 3>{});
    check(std::integral_constant<int, 2>{});
  }
}

TEST_CASE("M2L group operator tables (one or two quads a unit) give the truncated sums at every offset order") {
  // The kernel's arithmetic on the host: an offset of order o zeroes the entries of degree above o,
  // copies only the chunks of chunk_order <= o and sums columns n < columns_at(q, o) of each tile;
  // against the naive L_k = sum over |n| + |k| <= o of (-1)^|n| D_{n+k} M_n.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto check = [&](auto dim, int p, int rows) {
    constexpr int D = decltype(dim)::value;
    CAPTURE(D);
    CAPTURE(p);
    CAPTURE(rows);
    const int t = ff::terms<D>(p);
    const mp::Quads<D> tiles(p, rows, 1, rows);
    const mp::OperatorMap m = mp::operator_map<D>(p, tiles, rows);
    REQUIRE(m.map.size() == std::size_t(tiles.table_size));
    REQUIRE(m.chunk_order.size() * 4 == m.map.size());
    std::vector<double> Dv(static_cast<std::size_t>(t)), M(static_cast<std::size_t>(t));
    for (double& v : Dv) v = u(rng);
    for (double& v : M) v = u(rng);
    for (int o = 0; o <= p; ++o) {
      CAPTURE(o);
      std::vector<double> table(m.map.size(), std::nan(""));  // entries not copied stay NaN
      for (std::size_t e = 0; e < m.map.size(); ++e) {
        if (m.chunk_order[e / 4] > o) continue;
        const int g = m.degree[e] > o ? 0 : m.map[e];
        table[e] = g == 0 ? 0.0 : (g > 0 ? Dv[std::size_t(g - 1)] : -Dv[std::size_t(-g - 1)]);
      }
      std::vector<double> L(std::size_t(tiles.columns.size()) * rows, 0.0);
      for (int q = 0; q < int(tiles.columns.size()); ++q)
        for (int n = 0; n < tiles.columns_at(q, o); ++n)
          for (int j = 0; j < rows; ++j)
            L[std::size_t(rows * q + j)] += table[std::size_t(tiles.start[std::size_t(q)] + rows * n + j)] * M[std::size_t(n)];
      for (int k = 0; k < t; ++k) {
        const ff::MultiIndex mk = ff::multi_index<D>(k);
        double want = 0.0;
        for (int n = 0; n < t; ++n) {
          const ff::MultiIndex mn = ff::multi_index<D>(n);
          if (mn.degree() + mk.degree() > o) continue;
          want += (mn.degree() % 2 ? -1.0 : 1.0) * Dv[std::size_t(ff::index<D>(mn + mk))] * M[std::size_t(n)];
        }
        CAPTURE(k);
        CHECK(L[std::size_t(k)] == doctest::Approx(want).epsilon(1e-12).scale(1.0));
      }
    }
  };
  for (int p : {1, 3, 6, 9, 12})
    for (int rows : {4, 8}) {
      check(std::integral_constant<int, 3>{}, p, rows);
      check(std::integral_constant<int, 2>{}, p, rows);
    }
}

TEST_CASE("M2L tensor-core plans cover every k-step once, and the index map gives the truncated sums") {
  auto run = [](auto dim) {
    constexpr int D = decltype(dim)::value, U = 4;  // kTensorUnits
    for (int p : D == 3 ? std::vector<int>{1, 4, 8, 9, 12, 14, 16} : std::vector<int>{1, 5, 13, 16, 20}) {
      CAPTURE(D);
      CAPTURE(p);
      const mp::Quads<D> tiles(p, 16, 8, 1);
      const ff::OffsetOrders orders = ff::offset_orders(D, p);
      const auto classes = mp::order_classes<D>(orders);
      std::vector<int> plan;
      const int w = mp::best_plan<D>(tiles, classes, U, plan, 1);
      check_plan(tiles, plan, w, U, 1);
      const std::vector<std::uint32_t> map = mp::tensor_map<D>(p, tiles);
      const int t = ff::terms<D>(p), rows = (t + 7) / 8 * 8;
      std::mt19937 rng(std::uint32_t(100 * D + p));
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<double> deriv(static_cast<std::size_t>(t)), moments(static_cast<std::size_t>(rows));
      for (double& d : deriv) d = u(rng);
      for (const auto& order_class : classes) {
        const int q = order_class.first;  // (a structured binding cannot be captured in C++17)
        CAPTURE(q);
        // The kernel's signed table at order q: D_i (0 above degree q), then -D_i, then a zero.
        std::vector<double> dz(std::size_t(2 * t + 1), 0.0);
        for (int i = 0; i < t; ++i)
          if (ff::multi_index<D>(i).degree() <= q) dz[std::size_t(i)] = deriv[std::size_t(i)], dz[std::size_t(t + i)] = -deriv[std::size_t(i)];
        // Moments of degree <= q; the rows past them hold stale values (never zero in the kernel).
        for (int n = 0; n < rows; ++n) moments[std::size_t(n)] = n < ff::terms<D>(q) ? u(rng) : 1e3 * u(rng);
        std::vector<double> L(std::size_t(rows) + 16, 0.0);
        for (std::size_t r = 0; r < tiles.columns.size(); ++r) {
          const int steps = tiles.columns_at(int(r), q);  // the kernel's k-steps at order q
          for (int s = 0; s < steps; ++s)
            for (int lane = 0; lane < 32; ++lane) {
              const std::size_t at = 2 * ((std::size_t(tiles.start[r]) + std::size_t(s)) * 32 + std::size_t(lane));
              const int k = 16 * int(r) + lane / 4, n = 8 * s + lane % 4;
              const std::uint32_t w0 = map.at(at), w1 = map.at(at + 1);
              CHECK(n + 4 < rows);
              auto m = [&](int c) { return c < rows ? moments[std::size_t(c)] : 0.0; };
              L[std::size_t(k)] += dz.at(w0 & 0xffff) * m(n);
              L[std::size_t(k + 8)] += dz.at(w0 >> 16) * m(n);
              L[std::size_t(k)] += dz.at(w1 & 0xffff) * m(n + 4);
              L[std::size_t(k + 8)] += dz.at(w1 >> 16) * m(n + 4);
            }
        }
        for (int k = 0; k < t; ++k) {
          const ff::MultiIndex mk = ff::multi_index<D>(k);
          double want = 0;
          for (int n = 0; n < ff::terms<D>(q); ++n) {
            const ff::MultiIndex mn = ff::multi_index<D>(n);
            if (mn.degree() + mk.degree() > q) continue;
            want += (mn.degree() % 2 ? -1.0 : 1.0) * deriv[std::size_t(ff::index<D>(mn + mk))] * moments[std::size_t(n)];
          }
          CAPTURE(k);
          CHECK(std::abs(L[std::size_t(k)] - want) <= 1e-12 * (1 + std::abs(want)));
        }
        for (int k = t; k < rows + 16; ++k) CHECK(L[std::size_t(k)] == 0.0);  // rows past the terms
      }
    }
  };
  run(std::integral_constant<int, 2>{});
  run(std::integral_constant<int, 3>{});
}

TEST_CASE("M2L group slices: as many as the room asks, none past kMostSlices") {
  // Hopper's opt-in shared memory less the kernel's static arrays (about 100 bytes).
  const std::size_t optin = 232448 - 128;
  struct Case {
    int p, scalar, slices;
  };
  // 3D float p = 14..17 in 2, 3, 5, 10 slices; p = 18 would take 29 (the older kernel runs); 3D
  // double p = 12 and 13 in slices, p = 14 none (one quad alone passes the room).
  for (const Case& c : {Case{14, 4, 2}, Case{15, 4, 3}, Case{16, 4, 5}, Case{17, 4, 10}, Case{18, 4, 0},
                        Case{12, 8, 2}, Case{13, 8, 5}, Case{14, 8, 0}}) {
    CAPTURE(c.p);
    CAPTURE(c.scalar);
    const mp::Quads<3> quads(c.p);
    const auto cut = mp::slice_cuts<3>(quads, optin, c.scalar, ff::terms<3>(c.p), 10);
    CHECK(int(cut.size()) == c.slices);
    int next = 0;  // the slices cover the quads in order
    for (const auto& [q0, q1] : cut) {
      CHECK(q0 == next);
      CHECK(q1 > q0);
      next = q1;
    }
    if (!cut.empty()) CHECK(next == int(quads.columns.size()));
    CHECK(mp::group_kernel_fits(3, c.scalar, c.p, optin) == (c.slices > 0));
  }
  CHECK(mp::group_kernel_fits(3, 4, 13, optin));  // whole, in one stage
  CHECK(mp::slice_cuts<3>(mp::Quads<3>(20), optin, 4, ff::terms<3>(20), 10).empty());
}

// best_plan cuts only the piece sizes whose pieces can fit kMaxWarps warps' units, once each: the
// same plan as trying every (warps, piece size) pair on freshly cut pieces (what it did before).
namespace {

template <int D>
int exhaustive_plan(const mp::Quads<D>& quads, const std::vector<std::pair<int, double>>& classes, int U, std::vector<int>& plan,
                    int chunk) {
  int warps = 0;
  double best = 0;
  std::vector<int> trial;
  for (int w = 8; w <= mp::kMaxWarps; ++w)
    for (int piece : {8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 4096}) {
      double cost = 0;
      if (!mp::plan_units<D>(quads, classes, mp::plan_pieces<D>(quads, classes, piece, chunk), w, U, trial, cost)) continue;
      if (warps == 0 || cost < best * (1 - 1e-9)) warps = w, best = cost, plan = trial;
    }
  return warps;
}

template <int D>
void same_plan(const mp::Quads<D>& quads, const std::vector<std::pair<int, double>>& classes, int U) {
  std::vector<int> a, b;
  for (int chunk : {0, 1, mp::kGroupChunk}) {
    const int wa = mp::best_plan<D>(quads, classes, U, a, chunk), wb = exhaustive_plan<D>(quads, classes, U, b, chunk);
    CHECK(wa == wb);
    CHECK(a == b);
  }
}

}  // namespace

TEST_CASE("M2L group plans: best_plan's search skips only the piece sizes that cannot fit") {
  int planned = 0;
  for (int p : {3, 8, 10, 12, 14}) {
    CAPTURE(p);
    const auto c3 = mp::order_classes<3>(ff::offset_orders(3, p));
    const auto c2 = mp::order_classes<2>(ff::offset_orders(2, p));
    for (int rows : {4, 8})
      for (int U : {3, 5, 6, 10}) {
        CAPTURE(rows);
        CAPTURE(U);
        const mp::Quads<3> q3(p, rows, 1, rows);
        same_plan<3>(q3, c3, U);
        if (q3.last > 3) same_plan<3>(q3.range(1, 3), c3, U);  // a slice
        same_plan<2>(mp::Quads<2>(p, rows, 1, rows), c2, U);
        std::vector<int> plan;
        planned += mp::best_plan<3>(q3, c3, U, plan, mp::kGroupChunk) > 0;
      }
  }
  CHECK(planned > 10);  // most of these shapes have a plan: the comparison is not of empty searches
}

// Moments of 16 bits (packed_from, packed_words, group_shared_bytes): the packed part starts at a
// whole chunk, never below degree 6 (the lowest measured, docs/design.md §16), and from degree p - 4
// in 3D (p - 3 in 2D) where that is higher; a packed source's words are its floats and its pairs; the
// kernel's room holds its locals however small the packed moments are.
TEST_CASE("M2L packed moments: where they start, their words, and the room a block takes") {
  CHECK(mp::packed_from(3, 10) == ff::terms<3>(5));  // 56: degree 6 on
  CHECK(mp::packed_from(3, 12) == ff::terms<3>(7));  // 120: degree 8 on
  CHECK(mp::packed_from(2, 14) == 68);               // terms<2>(10) = 66, rounded up to a chunk
  CHECK(mp::packed_words(286, 56) == 56 + 115);
  CHECK(mp::packed_words(120, 68) == 68 + 26);
  CHECK(mp::packed_words(21, 28) == 21);  // nothing packed
  for (int dim : {2, 3})
    for (int p = 1; p <= ff::kMaxOrder; ++p) {
      CAPTURE(dim);
      CAPTURE(p);
      const int all = int(ff::terms_of(dim, p)), from = mp::packed_from(dim, p);
      const bool whole_chunk = from % mp::kGroupChunk == 0 || from == all;
      CHECK(whole_chunk);
      CHECK(from <= all);
      CHECK(from >= std::min(all, int(ff::terms_of(dim, 5))));
      const int first = std::max(6, p - (dim == 3 ? 4 : 3));
      CHECK(from >= std::min(all, int(ff::terms_of(dim, first - 1))));
      CHECK(from < std::min(all, int(ff::terms_of(dim, first - 1))) + mp::kGroupChunk);
      const int words = mp::packed_words(all, from);
      CHECK(2 * words >= all + std::min(all, from));
      CHECK(2 * words <= all + std::min(all, from) + 1);
      // The stages hold the packed words; the room the slots' locals need stays.
      for (int tl : {1, 2}) {
        const std::size_t packed = mp::group_shared_bytes(dim, 4, tl, 1, all, 0, words);
        const std::size_t plain = mp::group_shared_bytes(dim, 4, tl, 1, all, 0);
        CHECK(packed == plain);  // no table: the locals' room is the moments' own
        CHECK(mp::group_shared_bytes(dim, 4, tl, 2, all, 1000, words) <=
              mp::group_shared_bytes(dim, 4, tl, 2, all, 1000));
      }
    }
  CHECK(mp::packs_moments(3, 4, 11));
  CHECK(!mp::packs_moments(3, 4, 10));
  CHECK(!mp::packs_moments(3, 8, 12));  // double
  CHECK(!mp::packs_moments(2, 4, 16));
}
