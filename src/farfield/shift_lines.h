#pragma once
//! The lines of the GPU's line-at-a-time shifts (farfield/shifts_line.cuh; docs/design.md §16,
//! "Shifts by lines"): which terms form a line, their indices and how many children a block
//! takes. Host and device, so that tests/test_shift_lines.cc checks on
//! the CPU what the kernels decode.

#include <cmath>
#include <cstddef>

#include "core/hd.h"
#include "farfield/multi_index.h"

namespace nf::farfield::line_shifts {

constexpr int kLongest = kMaxOrder;  //!< the longest line: p + 1 terms at order kMaxOrder
//! A block's rows stay within this much shared memory (no opt-in, 4 blocks an SM).
constexpr std::size_t kRowBytes = 48 * 1024;

//! Children a block takes at `terms` coefficients a box: the most of 32, 16, ..., 1 whose rows fit
//! kRowBytes (3D float p = 10: 32; p = 14: 16; 3D double p = 20: 2).
template <class T>
NF_HD constexpr int children_per_block(int terms) {
  int b = 32;
  while (b > 1 && std::size_t(b) * std::size_t(terms | 1) * sizeof(T) > kRowBytes) b /= 2;
  return b;
}

//! The lines along one axis at order p, in order of s = u + w (the other two exponents): 3D line
//! l = s (s + 1) / 2 + w, longest first; 2D line l = u.
template <int D>
NF_HD constexpr int lines(int p) {
  return D == 3 ? (p + 1) * (p + 2) / 2 : p + 1;
}

//! Line l's other two exponents (u, w): along x they are (y, z), along y (x, z), along z (x, y).
template <int D>
NF_HD inline void line_exponents(int l, int& u, int& w) {
  if constexpr (D == 2) {
    u = l, w = 0;
  } else {
    int s = int((sqrtf(8.0f * float(l) + 1.0f) - 1.0f) * 0.5f);
    while ((s + 1) * (s + 2) / 2 <= l) ++s;
    while (s * (s + 1) / 2 > l) --s;
    w = l - s * (s + 1) / 2;
    u = s - w;
  }
}

//! The lines l = first, first + by, first + 2 by, ... in order, their exponents (u, w) advanced a
//! step at a time (line_exponents once, at the first).
template <int D>
struct LineCursor {
  int l, u, w;
  NF_HD LineCursor(int first) : l(first) { line_exponents<D>(first, u, w); }
  NF_HD void advance(int by) {
    l += by;
    if constexpr (D == 2) {
      u = l;
    } else {  // 3D: line s (s + 1) / 2 + w with s = u + w, w = 0 .. s
      int s = u + w;
      w += by;
      while (w > s) w -= ++s;
      u = s - w;
    }
  }
};

//! The indices (multi_index.h's order) of a line's terms e = 0 .. M along `axis`, the other two
//! exponents (u, w): index = degree_start(d) + (3D: triangle(b) + z; 2D: y) with d the degree and b
//! the tail degree y + z, walked a step at a time (degree_start(d + 1) - degree_start(d) =
//! (d + 1)(d + 2) / 2 in 3D, d + 1 in 2D). The axis is a run-time value so that the three axes
//! share one copy of each line length's code.
template <int D, int M>
NF_HD inline void line_indices(int axis, int u, int w, int (&idx)[M + 1]) {
  const int x = axis == 0 ? 0 : u;
  const int y = axis == 1 ? 0 : axis == 0 ? u : w;
  const int z = D == 3 ? (axis == 2 ? 0 : w) : 0;
  int d = x + y + z, b = y + z;
  // the part of a step that does not grow with d: the tail degree grows (3D: triangle(b) grows by
  // b + 1) or y does (2D), along y and z; z grows along z
  const int tail = axis == 0 ? 0 : 1;
  const int zstep = D == 3 && axis == 2 ? 1 : 0;
  idx[0] = row_start<D>(d, b) + (D == 3 ? z : 0);
#pragma unroll
  for (int e = 1; e <= M; ++e) {
    int step = D == 3 ? (d + 1) * (d + 2) / 2 : d + 1;
    step += D == 3 ? tail * (b + 1) : tail;
    idx[e] = idx[e - 1] + step + zstep;
    ++d, ++b;
  }
}

}  // namespace nf::farfield::line_shifts
