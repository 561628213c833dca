// The lines of the GPU's line-at-a-time shifts (farfield/shift_lines.h), on the CPU, at every order
// 1..20 in 2D and 3D: along each axis the lines, decoded as the kernels decode them
// (line_exponents, line_indices at the line's length; a lane's LineCursor), hold every term of order <= p exactly once,
// each line's term e being the multi-index with exponent e along the axis and the line's two others
// (multi_index.h's own index, not the kernels' walk); the longest lines come first; and a block's rows fit its shared memory with every child count a
// power of two that divides a warp. The kernels' sums are checked on the GPU (test_gpu_fmm.cc: fmm
// against cpu-fmm at every variant of the shifts).
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "farfield/shift_lines.h"

namespace ff = nf::farfield;
namespace ls = nf::farfield::line_shifts;

namespace {

// The indices of the line of M + 1 terms, as the kernels compute them.
template <int D, int M>
std::vector<int> indices_of(int axis, int u, int w) {
  int idx[M + 1];
  ls::line_indices<D, M>(axis, u, w, idx);
  return std::vector<int>(idx, idx + M + 1);
}

template <int D, int M = 0>
std::vector<int> indices_at(int m, int axis, int u, int w) {
  if constexpr (M <= ls::kLongest) {
    if (m == M) return indices_of<D, M>(axis, u, w);
    return indices_at<D, M + 1>(m, axis, u, w);
  }
  return {};
}

// A lane's walk over the lines (LineCursor: from its slot, by the block's slots) meets the lines
// line_exponents decodes, for every slot count a block has (4 warps of 32 / B slots a warp).
template <int D>
void check_cursor(int p) {
  for (int slots : {4, 8, 16, 32, 64, 128})
    for (int first = 0; first < slots; ++first) {
      CAPTURE(slots);
      CAPTURE(first);
      for (ls::LineCursor<D> c(first); c.l < ls::lines<D>(p); c.advance(slots)) {
        int u = -1, w = -1;
        ls::line_exponents<D>(c.l, u, w);
        CAPTURE(c.l);
        REQUIRE(c.u == u);
        REQUIRE(c.w == w);
      }
    }
}

template <int D, int Axis>
void check_axis(int p) {
  CAPTURE(D);
  CAPTURE(Axis);
  CAPTURE(p);
  std::vector<int> seen(ff::terms<D>(p), 0);
  int previous = p + 1;
  for (int l = 0; l < ls::lines<D>(p); ++l) {
    CAPTURE(l);
    int u = -1, w = -1;
    ls::line_exponents<D>(l, u, w);
    REQUIRE(u >= 0);
    REQUIRE(w >= 0);
    REQUIRE(u + w <= p);
    if (D == 2) REQUIRE(w == 0);
    const int m = p - u - w;
    CHECK(m <= previous);  // longest first
    previous = m;
    const std::vector<int> idx = indices_at<D>(m, Axis, u, w);
    REQUIRE(int(idx.size()) == m + 1);
    for (int e = 0; e <= m; ++e) {
      ff::MultiIndex n{0, 0, 0};
      if (Axis == 0) n = {e, u, w};
      if (Axis == 1) n = {u, e, w};
      if (Axis == 2) n = {u, w, e};
      CAPTURE(e);
      REQUIRE(idx[e] == ff::index<D>(n));
      ++seen[idx[e]];
    }
  }
  for (int i = 0; i < int(seen.size()); ++i) {
    CAPTURE(i);
    CHECK(seen[i] == 1);
  }
}

template <class T>
void check_blocks() {
  for (int dim : {2, 3})
    for (int p = 1; p <= ff::kMaxOrder; ++p) {
      const int terms = int(ff::terms_of(dim, p));
      const int b = ls::children_per_block<T>(terms);
      CAPTURE(dim);
      CAPTURE(p);
      CAPTURE(sizeof(T));
      CHECK(b >= 1);
      CHECK(32 % b == 0);
      CHECK(std::size_t(b) * std::size_t(terms | 1) * sizeof(T) <= ls::kRowBytes);
      if (b < 32) CHECK(std::size_t(2 * b) * std::size_t(terms | 1) * sizeof(T) > ls::kRowBytes);
    }
}

}  // namespace

TEST_CASE("shift lines: every term once along every axis, longest lines first, each lane's walk, orders 1..20") {
  for (int p = 1; p <= ff::kMaxOrder; ++p) {
    check_axis<2, 0>(p);
    check_axis<2, 1>(p);
    check_axis<3, 0>(p);
    check_axis<3, 1>(p);
    check_axis<3, 2>(p);
    check_cursor<2>(p);
    check_cursor<3>(p);
  }
}

TEST_CASE("shift lines: the blocks' rows") {
  check_blocks<float>();
  check_blocks<double>();
  CHECK(ls::children_per_block<float>(ff::terms<3>(10)) == 32);
  CHECK(ls::children_per_block<double>(ff::terms<3>(20)) == 2);
}
