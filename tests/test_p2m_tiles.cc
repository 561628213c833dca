// The tiles of P2M's block kernel (farfield/p2m_tiles.h), on the CPU, at every order 1..20 in 2D and
// 3D, float and double: the tiles, decoded as the kernel decodes them (tile_at), are distinct, each
// holds a term, and together they hold every term of order <= P exactly once (x exponent a0 + u,
// the (j, l) pair of column c0 + v in the order of tail degree, then l, enumerated here); and the
// block's shape keeps its 16-byte loads aligned, its rows an odd number of 16-byte units apart,
// every tile on a lane and its shared memory within what one block may take. The kernel's own
// writes of a tile's sums are checked on the GPU (test_gpu_fmm.cc: fmm against cpu-fmm).
#include <doctest/doctest.h>

#include <cstddef>
#include <set>
#include <utility>
#include <vector>

#include "farfield/p2m_tiles.h"

namespace ff = nf::farfield;
namespace pt = nf::farfield::p2m_tiles;

namespace {

constexpr std::size_t kMostSharedBytes = 227 * 1024;  // one block's opt-in limit on sm_90

template <int D, class T, int P>
void check_tiles() {
  using S = pt::Shape<D, T, P>;
  CAPTURE(D);
  CAPTURE(sizeof(T));
  CAPTURE(P);
  // The columns (j, l) in order: tail degree s = j + l, then l.
  std::vector<std::pair<int, int>> cols;
  for (int s = 0; s <= P; ++s)
    for (int l = 0; l <= (D == 3 ? s : 0); ++l) cols.push_back({s - l, l});
  REQUIRE(int(cols.size()) == S::kCols);

  std::vector<int> seen(S::kTerms, 0);
  std::set<std::pair<int, int>> tiles;
  for (int t = 0; t < S::kTiles; ++t) {
    CAPTURE(t);
    int a0 = -1, c0 = -1;
    pt::tile_at<D, T, P>(t, a0, c0);
    CHECK(a0 % 4 == 0);
    CHECK(c0 % 4 == 0);
    REQUIRE(c0 >= 0);
    REQUIRE(c0 < S::kCols);
    CHECK(a0 + cols[c0].first + cols[c0].second <= P);  // the tile holds a term
    CHECK(a0 + 4 <= S::kRowX);                           // its x factors lie in the row
    CHECK(tiles.insert({a0, c0}).second);
    // The tile's terms: x exponent a0 + u of column c0 + v, where a + s <= P and the column exists.
    int written = 0;
    for (int v = 0; v < 4 && c0 + v < S::kCols; ++v)
      for (int u = 0; u < 4; ++u) {
        const auto [j, l] = cols[c0 + v];
        if (a0 + u + j + l > P) continue;
        ++written;
        const int n = ff::index<D>({a0 + u, j, l});
        REQUIRE(n >= 0);
        REQUIRE(n < S::kTerms);
        ++seen[n];
      }
    CHECK(written > 0);
  }
  for (int n = 0; n < S::kTerms; ++n) {
    CAPTURE(n);
    CHECK(seen[n] == 1);
  }

  CHECK(S::kRowX % 4 == 0);
  CHECK(S::kRowX >= P + 1);
  CHECK(S::kRow % 4 == 0);
  CHECK(S::kRow >= S::kRowX + S::kCols);
  CHECK(S::kStride >= S::kRow);
  CHECK(S::kStride * sizeof(T) % 16 == 0);
  CHECK((S::kStride * sizeof(T) / 16) % 2 == 1);
  CHECK(S::kRowX * sizeof(T) % 16 == 0);
  CHECK(S::kGroups >= 1);
  CHECK(S::kGroups * S::kTiles <= 32 * S::kItems);  // every (group, tile) on a lane
  CHECK((S::kGroups == 1 || S::kGroups * S::kTiles <= 32));
  CHECK(S::shared_bytes() >= std::size_t(S::kThreads) * S::kStride * sizeof(T));
  CHECK(S::shared_bytes() >= std::size_t(S::kSlots) * S::kTerms * sizeof(T));
  CHECK(S::shared_bytes() <= kMostSharedBytes);
}

template <int D, class T, int... P>
void check_orders(std::integer_sequence<int, P...>) {
  (check_tiles<D, T, P + 1>(), ...);
}

}  // namespace

TEST_CASE("P2M tiles: every term of order <= P once, at its index, at every order, 2D and 3D") {
  const auto orders = std::make_integer_sequence<int, ff::kMaxOrder>{};
  check_orders<2, float>(orders);
  check_orders<3, float>(orders);
  check_orders<2, double>(orders);
  check_orders<3, double>(orders);
}

TEST_CASE("P2M tiles: the counts of the shapes the kernel was measured with") {
  // 3D float p = 10: 26 tiles, one group a warp; p = 4: 5 tiles, 6 groups; p = 12: 40 tiles, 2 a lane.
  CHECK(pt::Shape<3, float, 10>::kTiles == 26);
  CHECK(pt::Shape<3, float, 10>::kGroups == 1);
  CHECK(pt::Shape<3, float, 4>::kTiles == 5);
  CHECK(pt::Shape<3, float, 4>::kGroups == 6);
  CHECK(pt::Shape<3, float, 12>::kItems == 2);
  CHECK(pt::Shape<3, double, 20>::shared_bytes() == 132096);
}
