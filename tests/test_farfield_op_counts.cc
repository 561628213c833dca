// The full methods' operation counts per stage (src/farfield/op_counts.h, ForceMethod::counts()):
// the closed forms against the operators' loops enumerated term by term, and cpu-fmm's counts
// against the same sums over a tree, levels and lists built here and a near field counted pair by
// pair; bench rows of a full method carry them.
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "farfield/lists.h"
#include "farfield/offset_order.h"
#include "farfield/op_counts.h"
#include "helpers.h"
#include "methods/registry.h"
#include "tree/levels.h"
#include "tree/morton.h"

using namespace nf;

namespace {

// The operators' products enumerated over multi-indices (farfield/expansion.h's loops): pairs
// (k, j) with |k| + |j| <= p (M2M, L2L and M2L alike), and the terms of degree < p (L2P).
// Each order's count is enumerated once and kept: the mean below asks for it per offset (3D p = 20,
// 1771 x 1771 index pairs, once instead of 1512 times).
template <int D>
std::uint64_t enumerated_pairs(int p) {
  static std::map<int, std::uint64_t> known;
  if (const auto it = known.find(p); it != known.end()) return it->second;
  std::uint64_t pairs = 0;
  for (int k = 0; k < farfield::terms<D>(p); ++k)
    for (int j = 0; j < farfield::terms<D>(p); ++j)
      if (farfield::multi_index<D>(k).degree() + farfield::multi_index<D>(j).degree() <= p) ++pairs;
  return known[p] = pairs;
}
template <int D>
std::uint64_t enumerated_below(int p) {
  std::uint64_t n = 0;
  for (int k = 0; k < farfield::terms<D>(p); ++k) n += farfield::multi_index<D>(k).degree() < p;
  return n;
}

// M2L's multiply-adds a translation with the orders per offset: the mean over the list offsets of
// every child position (all R with components in c - 3 .. c + 2, not all within 1) of the pairs
// enumerated at the offset's order, rounded.
std::uint64_t mean_m2l_pairs(int dim, int p) {
  const farfield::OffsetOrders q = farfield::offset_orders(dim, p);
  double sum = 0;
  int count = 0;
  const int lo[2] = {-3, -2};
  for (int cx = 0; cx < 2; ++cx)
    for (int cy = 0; cy < 2; ++cy)
      for (int cz = 0; cz < (dim == 3 ? 2 : 1); ++cz)
        for (int x = lo[cx]; x <= lo[cx] + 5; ++x)
          for (int y = lo[cy]; y <= lo[cy] + 5; ++y)
            for (int z = dim == 3 ? lo[cz] : 0; z <= (dim == 3 ? lo[cz] + 5 : 0); ++z) {
              if (std::abs(x) <= 1 && std::abs(y) <= 1 && std::abs(z) <= 1) continue;
              const int o = q[x * x + y * y + z * z];
              sum += double(dim == 2 ? enumerated_pairs<2>(o) : enumerated_pairs<3>(o));
              ++count;
            }
  CHECK(count == (dim == 3 ? 8 * 189 : 4 * 27));
  return std::uint64_t(sum / count + 0.5);
}

template <int D>
void check_closed_forms() {
  for (int p = 0; p <= farfield::kMaxOrder; ++p) {
    CAPTURE(p);
    CHECK(farfield::coefficient_pairs(D, p) == enumerated_pairs<D>(p));
    CHECK(farfield::m2l_madds(D, p) == enumerated_pairs<D>(p));
    CHECK(farfield::m2l_madds_mean(D, p) == mean_m2l_pairs(D, p));
    CHECK(farfield::m2l_madds_mean(D, p) <= farfield::m2l_madds(D, p));
    CHECK(farfield::shift_madds(D, p) == enumerated_pairs<D>(p) + std::uint64_t(D) * p);
    CHECK(farfield::p2m_madds(D, p) == std::uint64_t(farfield::terms<D>(p)) + std::uint64_t(D) * p);
    CHECK(farfield::l2p_madds(D, p) == (D + 1) * enumerated_below<D>(p) + std::uint64_t(D) * p);
  }
}

// True when the leaf boxes of keys a and b are the same or adjacent.
bool near(int dim, std::uint64_t a, std::uint64_t b) {
  std::uint32_t ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
  if (dim == 2) {
    std::uint32_t a2[2], b2[2];
    morton_coords<2>(a, a2);
    morton_coords<2>(b, b2);
    ca[0] = a2[0], ca[1] = a2[1], cb[0] = b2[0], cb[1] = b2[1];
  } else {
    morton_coords<3>(a, ca);
    morton_coords<3>(b, cb);
  }
  for (int k = 0; k < dim; ++k)
    if ((ca[k] > cb[k] ? ca[k] - cb[k] : cb[k] - ca[k]) > 1) return false;
  return true;
}

std::map<std::string, std::uint64_t> counts_of(ForceMethod& m) {
  std::map<std::string, std::uint64_t> out;
  for (const Count& c : m.counts()) out[c.name] = c.value;
  return out;
}

}  // namespace

TEST_CASE("operation counts: the closed forms are the operators' loops, term by term") {
  check_closed_forms<2>();
  check_closed_forms<3>();
  // expansion.h's quoted figures.
  CHECK(farfield::coefficient_pairs(3, 8) == 3003);
  CHECK(farfield::coefficient_pairs(2, 8) == 495);
}

TEST_CASE("cpu-fmm's counts per stage equal sums over its tree, lists and near pairs counted here") {
  struct Case {
    std::string what;
    Particles p;
    int level, order;
  };
  const std::vector<Case> cases = {{"uniform 2D level 4", test::make("uniform", 2, 1200, 61), 4, 6},
                                   {"uniform 3D level 3", test::make("uniform", 3, 900, 62), 3, 5},
                                   {"plummer 3D level 4 (empty boxes)", test::make("plummer", 3, 800, 63), 4, 3},
                                   {"level 1: no far field", test::make("uniform", 2, 300, 64), 1, 4}};
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const int dim = c.p.dim, p = c.order;
    const Domain d = default_domain(c.p);
    MethodSetup s;
    s.level = c.level;
    s.domain = d;
    s.order = p;
    const auto m = make_method(find_kernel("cpu-fmm"), s, c.p);
    m->prepare(c.p);
    m->evaluate();
    const std::map<std::string, std::uint64_t> got = counts_of(*m);

    // The figures, independently: levels and lists of a tree built here, pairs by brute force.
    const TreeLevels t = build_levels(build_tree(c.p, c.level, d, false));
    const farfield::InteractionLists lists = farfield::build_interaction_lists(t);
    std::uint64_t translations = 0, shifted = 0;
    for (int l = 2; l <= c.level; ++l) translations += lists[l].ids.size();
    for (int l = 3; l <= c.level; ++l) shifted += t.level[l].boxes();
    const std::vector<std::uint64_t> key = particle_keys(c.p, c.level, d);
    std::uint64_t pairs = 0;
    for (std::size_t i = 0; i < key.size(); ++i)
      for (std::size_t j = 0; j < key.size(); ++j) pairs += i != j && near(dim, key[i], key[j]);
    const std::uint64_t n = c.p.size();
    const std::uint64_t pairs_p = dim == 2 ? enumerated_pairs<2>(p) : enumerated_pairs<3>(p);
    const std::uint64_t below = dim == 2 ? enumerated_below<2>(p) : enumerated_below<3>(p);
    const std::uint64_t terms = farfield::terms_of(dim, p), powers = std::uint64_t(dim) * p;
    const bool far = c.level >= 2;

    CHECK(got.at("near_pairs") == pairs);
    CHECK(got.at("m2l_translations") == translations);
    CHECK(got.at("m2l_madds") == translations * mean_m2l_pairs(dim, p));
    CHECK(got.at("upward_madds") == (far ? n * (terms + powers) + shifted * (pairs_p + powers) : 0));
    CHECK(got.at("downward_madds") == (far ? shifted * (pairs_p + powers) + n * ((dim + 1) * below + powers) : 0));
    if (far) CHECK(translations > 0);
  }
}

TEST_CASE("bench rows of a full method carry the counts per stage; near-field rows leave them empty") {
  test::TempDir dir;
  const auto rows = test::rows_after({"bench", "--kernel", "cpu-fmm,cpu-omp", "--dist", "uniform", "--dim", "2", "--n",
                                      "1000", "--level", "3", "--order", "4", "--reps", "1", "--warmup", "0",
                                      "--output", dir.file("r.csv")},
                                     dir.file("r.csv"));
  REQUIRE(rows.size() == 3);
  const auto& h = rows[0];
  for (const char* col : {"upward_madds", "m2l_translations", "m2l_madds", "downward_madds", "near_pairs"}) {
    CAPTURE(col);
    CHECK(!rows[1][test::column(h, col)].empty());
    CHECK(rows[1][test::column(h, col)] != "0");
    CHECK(rows[2][test::column(h, col)].empty());
  }
  CHECK(rows[1][test::column(h, "kernel")] == "cpu-fmm");
  // The near field's pairs are the interactions bench credits the near-field kernel with.
  CHECK(rows[1][test::column(h, "near_pairs")] == rows[2][test::column(h, "interactions")]);
  CHECK(std::stoull(rows[1][test::column(h, "m2l_madds")]) ==
        std::stoull(rows[1][test::column(h, "m2l_translations")]) * mean_m2l_pairs(2, 4));
}

TEST_CASE("orders per offset: p at the nearest offsets, never rising with the distance, p everywhere at the "
          "highest order and when asked") {
  for (int dim : {2, 3})
    for (int p = 1; p <= nf::farfield::kMaxOrder; ++p) {
      CAPTURE(dim);
      CAPTURE(p);
      const nf::farfield::OffsetOrders q = nf::farfield::offset_orders(dim, p);
      for (int r2 = 0; r2 <= 4; ++r2) CHECK(q[r2] == p);
      // only from kOffsetOrdersFrom multiply-adds a translation on (3D p >= 8, 2D p >= 14), and not
      // at the highest order
      const bool graded = p >= (dim == 3 ? 8 : 14) && p < nf::farfield::kMaxOrder;
      CHECK((p >= (dim == 3 ? 8 : 14)) == (nf::farfield::coefficient_pairs(dim, p) >= nf::farfield::kOffsetOrdersFrom));
      if (!graded) {
        for (int r2 = 0; r2 <= nf::farfield::kMaxOffsetR2; ++r2) CHECK(q[r2] == p);
        continue;
      }
      for (int r2 = 5; r2 <= nf::farfield::kMaxOffsetR2; ++r2) {
        CHECK(q[r2] <= q[r2 - 1]);
        CHECK(q[r2] >= 0);
      }
      // The rule: the smallest order whose modelled error (a / r)^(q+1) / r is within f of the
      // nearest offsets' at p, here with its own arithmetic.
      const nf::farfield::OffsetRule rule = nf::farfield::offset_rule();
      for (int r2 = 5; r2 <= nf::farfield::kMaxOffsetR2; ++r2) {
        const double r = std::sqrt(double(r2)), target = rule.f * std::pow(rule.a / 2, p + 1) / 2;
        int want = p;
        for (int o = p; o >= 0; --o)
          if (std::pow(rule.a / r, o + 1) / r <= target * (1 + 1e-12)) want = o;
        CHECK(q[r2] == want);
      }
      nf::test::EnvScope full("NEARFIELD_M2L_ORDERS", "full");
      const nf::farfield::OffsetOrders all = nf::farfield::offset_orders(dim, p);
      for (int r2 = 0; r2 <= nf::farfield::kMaxOffsetR2; ++r2) CHECK(all[r2] == p);
    }
  // A value the variables do not take is refused, at every order (a typo had run the rule under
  // the variant's name).
  for (const std::pair<const char*, const char*>& setting : std::vector<std::pair<const char*, const char*>>{
           {"NEARFIELD_M2L_ORDERS", "ful"}, {"NEARFIELD_M2L_GRADE", "1"}, {"NEARFIELD_M2L_GRADE", "1,0.25x"},
           {"NEARFIELD_M2L_GRADE", "0,0.25"}, {"NEARFIELD_M2L_GRADE", "1;0.25"}, {"NEARFIELD_M2L_GRADE", "1, 0.25"}}) {
    const char* name = setting.first;  // not a structured binding: CAPTURE's lambda takes it (clang, C++17)
    const char* value = setting.second;
    CAPTURE(name);
    CAPTURE(value);
    nf::test::EnvScope env(name, value);
    for (int p : {4, 10}) CHECK_THROWS_AS(nf::farfield::offset_orders(3, p), nf::UsageError);
    // cpu-fmm and cpu-fmm-adaptive refuse it when they prepare, before any work.
    const nf::Particles bodies = nf::test::make("uniform", 3, 300, 5);
    nf::MethodSetup s;
    s.level = 3;
    s.domain = nf::default_domain(bodies);
    s.order = 4;
    for (const char* kernel : {"cpu-fmm", "cpu-fmm-adaptive"}) {
      CAPTURE(kernel);
      s.leaf_size = std::string(kernel) == "cpu-fmm-adaptive" ? 16 : 0;
      const auto m = nf::make_method(nf::find_kernel(kernel), s, bodies);
      CHECK_THROWS_WITH_AS(m->prepare(bodies), doctest::Contains(name), nf::UsageError);
    }
  }
  {
    nf::test::EnvScope graded("NEARFIELD_M2L_ORDERS", "graded"), grade("NEARFIELD_M2L_GRADE", "1,0.25");
    CHECK(nf::farfield::offset_orders(3, 10)[nf::farfield::kMaxOffsetR2] < 10);
  }
  // What it buys in 3D at p = 10: under 0.4 of the full sums' multiply-adds.
  CHECK(double(nf::farfield::m2l_madds_mean(3, 10)) < 0.4 * double(nf::farfield::m2l_madds(3, 10)));
}
