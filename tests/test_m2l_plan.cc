// The sibling-group M2L kernel's plans (farfield/m2l_group_plan.h), on the CPU: for the whole
// table and for slices of its row quads (the orders whose table does not fit in shared memory),
// every column of every covered quad is summed by exactly one unit, the packed quad index is
// relative to the plan's first quad and fits its 8 bits, and the table offset is relative to the
// first quad's entries.
#include <doctest/doctest.h>

#include <map>
#include <utility>
#include <vector>

#include "farfield/m2l_group_plan.h"

namespace ff = nf::farfield;
namespace mp = nf::farfield::m2l_plan;

namespace {

// Checks a plan of `warps` warps of U units each over quads.first .. quads.last - 1.
template <int D>
void check_plan(const mp::Quads<D>& quads, const std::vector<int>& plan, int warps, int U) {
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
    CHECK((first & 0x3ffffff) == quads.start[std::size_t(q)] - quads.start[std::size_t(quads.first)]);
    CHECK((first >> 26) == quads.degree[std::size_t(q)]);
    for (int n = n0; n < n1; ++n) ++covered[q].at(std::size_t(n));
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
      const int w = mp::best_plan<D>(quads, classes, U, plan);
      check_plan(quads, plan, w, U);
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
        const int w = mp::best_plan<D>(part, classes, U, plan);
        check_plan(part, plan, w, U);
        covered += q1 - q0;
      }
      CHECK(covered == count);
    }
  }
}
