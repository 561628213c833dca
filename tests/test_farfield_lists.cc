// The far field's tree with levels and its interaction lists (src/tree/levels.h,
// src/farfield/lists.h): every level's boxes against a tree built at that level, and the lists
// against a brute-force well-separation check: every pair of particles counted exactly once, in
// the near field or through one M2L between ancestors.
#include <algorithm>
#include <map>
#include <set>

#include "core/errors.h"
#include "farfield/lists.h"
#include "helpers.h"
#include "tree/levels.h"
#include "tree/morton.h"

using namespace nf;

namespace {

struct Case {
  std::string what;
  Particles p;
  int level;
};

std::vector<Case> cases() {
  return {{"uniform 2D", test::make("uniform", 2, 1500, 1), 5},
          {"uniform 3D", test::make("uniform", 3, 1500, 2), 4},
          {"clusters 2D (empty boxes)", test::make("clusters", 2, 1200, 3), 6},
          {"plummer 3D", test::make("plummer", 3, 1000, 4), 5},
          {"core 2D (one giant box)", test::make("core", 2, 800, 5), 7},
          {"one particle", test::from_points(3, {{0.2, 0.3, 0.4}}), 3},
          {"no particles", test::from_points(2, {}), 3},
          {"level 2", test::make("uniform", 2, 300, 6), 2}};
}

// Integer coordinates of a box key at dimension d.
std::array<std::int64_t, 3> coords(int dim, std::uint64_t key) {
  std::array<std::int64_t, 3> c{0, 0, 0};
  if (dim == 2) {
    std::uint32_t k[2];
    morton_coords<2>(key, k);
    c = {k[0], k[1], 0};
  } else {
    std::uint32_t k[3];
    morton_coords<3>(key, k);
    c = {k[0], k[1], k[2]};
  }
  return c;
}

bool adjacent(int dim, std::uint64_t a, std::uint64_t b) {
  const auto ca = coords(dim, a), cb = coords(dim, b);
  for (int k = 0; k < dim; ++k)
    if (std::llabs(ca[k] - cb[k]) > 1) return false;
  return true;
}

}  // namespace

TEST_CASE("tree with levels: each level's boxes, particles, parents and children are a tree built at that level") {
  for (const Case& c : cases()) {
    CAPTURE(c.what);
    const Domain d = default_domain(c.p);
    const TreeLevels t = build_levels(build_tree(c.p, c.level, d, false));
    REQUIRE(t.level.size() == std::size_t(c.level) + 1);
    for (int l = 0; l <= c.level; ++l) {
      CAPTURE(l);
      const Tree direct = build_tree(c.p, l, d, false);
      const TreeLevel& L = t.level[l];
      CHECK(L.key == direct.box_key);
      CHECK(L.first == (direct.box_first.empty() ? std::vector<std::uint32_t>{0} : direct.box_first));
      CHECK(L.near.offset == (direct.near_full.offset.empty() ? std::vector<std::uint32_t>{0} : direct.near_full.offset));
      CHECK(L.near.ids == direct.near_full.ids);
      if (l > 0) {
        REQUIRE(L.parent.size() == L.boxes());
        for (std::uint32_t b = 0; b < L.boxes(); ++b) {
          const std::uint32_t p = L.parent[b];
          REQUIRE(p < t.level[l - 1].boxes());
          CHECK(t.level[l - 1].key[p] == L.key[b] >> c.p.dim);  // parent = key >> d
          CHECK(t.level[l - 1].child[p] <= b);
          CHECK(b < t.level[l - 1].child[p + 1]);
        }
      }
    }
  }
}

TEST_CASE("interaction lists: every pair of particles once, in the near field or through exactly one M2L") {
  for (const Case& c : cases()) {
    CAPTURE(c.what);
    const int dim = c.p.dim;
    const Tree tree = build_tree(c.p, c.level, default_domain(c.p), false);
    const TreeLevels t = build_levels(tree);
    const farfield::InteractionLists lists = farfield::build_interaction_lists(t);
    REQUIRE(lists.size() == t.level.size());
    std::size_t longest = 0;
    for (int l = 0; l <= c.level; ++l) {
      const TreeLevel& L = t.level[l];
      for (std::uint32_t b = 0; b < L.boxes(); ++b) {
        const std::uint32_t n = lists[l].offset[b + 1] - lists[l].offset[b];
        if (l < 2) CHECK(n == 0);  // levels 0 and 1: no far field
        longest = std::max<std::size_t>(longest, n);
        std::set<std::uint32_t> seen;
        for (std::uint32_t k = lists[l].offset[b]; k < lists[l].offset[b + 1]; ++k) {
          const std::uint32_t s = lists[l].ids[k];
          CHECK(seen.insert(s).second);                      // no box twice
          CHECK(!adjacent(dim, L.key[b], L.key[s]));          // well separated
          CHECK(adjacent(dim, L.key[b] >> dim, L.key[s] >> dim));  // parents the same or adjacent
        }
      }
    }
    CHECK(longest <= (dim == 2 ? 27u : 189u));
    // Every ordered pair of leaf boxes: adjacent (the near field) or exactly one level where the
    // target's ancestor lists the source's ancestor.
    const TreeLevel& leaf = t.level[c.level];
    std::vector<std::vector<std::uint32_t>> ancestor(leaf.boxes(), std::vector<std::uint32_t>(c.level + 1));
    for (std::uint32_t b = 0; b < leaf.boxes(); ++b) {
      ancestor[b][c.level] = b;
      for (int l = c.level; l > 0; --l) ancestor[b][l - 1] = t.level[l].parent[ancestor[b][l]];
    }
    auto listed = [&](int l, std::uint32_t target, std::uint32_t source) {
      const auto& ids = lists[l].ids;
      return std::binary_search(ids.begin() + lists[l].offset[target], ids.begin() + lists[l].offset[target + 1], source);
    };
    std::size_t bad = 0;
    for (std::uint32_t a = 0; a < leaf.boxes(); ++a)
      for (std::uint32_t b = 0; b < leaf.boxes(); ++b) {
        const bool near = adjacent(dim, leaf.key[a], leaf.key[b]);
        int paths = 0;
        for (int l = 2; l <= c.level; ++l) paths += listed(l, ancestor[a][l], ancestor[b][l]);
        bad += near ? paths != 0 : paths != 1;
      }
    CHECK(bad == 0);
  }
}

TEST_CASE("a level whose lists outgrow their 32-bit offsets is refused, naming the level") {
  using farfield::check_list_entries;
  CHECK_NOTHROW(check_list_entries(0, 2));
  CHECK_NOTHROW(check_list_entries(0xffffffffull, 9));
  CHECK_THROWS_WITH_AS(check_list_entries(0x100000000ull, 9),
                       doctest::Contains("level 9's interaction (M2L) lists hold 4294967296 entries"), UsageError);
  // 60 million non-empty 3D boxes of 85 entries each (80M particles at an explicit level 9).
  CHECK_THROWS_AS(check_list_entries(60000000ull * 85, 9), UsageError);
}
