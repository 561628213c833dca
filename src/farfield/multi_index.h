#pragma once
//! Multi-indices of the far field's Cartesian expansions (docs/design.md §16): their one order,
//! the number of terms up to order p, and index arithmetic for host and device code.
//!
//! A multi-index n = (n_x, n_y[, n_z]) has degree |n| = n_x + n_y [+ n_z]. Coefficient arrays hold
//! every n with |n| <= p, graded by degree; within a degree, n_x descending, then n_y descending
//! (so n_z ascending). 2D is the 3D order restricted to n_z = 0 (2D has no z index at all).
//!
//! The layout is built from *rows*: the terms of one degree d and one tail degree b = n_y + n_z,
//! that is one n_x = d - b, stored contiguously with n_z = 0 .. b (3D; a 2D row is one term):
//!
//!   index(n) = row_start(d, b) + n_z,  row_start(d, b) = terms(d - 1) + (3D: b(b+1)/2, 2D: b).
//!
//! Why closed forms and no tables: in this order adding or removing a multi-index moves whole rows
//! onto whole rows (n + k lies in row (|n|+|k|, b_n+b_k) at offset z_n+z_k), so every operator's
//! inner loop runs over two contiguous runs of coefficients, and the row starts (a few integer
//! multiplies) are computed outside the inner loops. A table would cost a memory load in each inner loop (local or constant memory
//! on the GPU, where divergent indices serialize) and would have to be built and passed to kernels.
//!
//! Graded order means that the first terms(p) coefficients of an expansion of order P > p are
//! those of degree <= p: moments (P2M, M2M) of order P contain the moments of every lower order.
//!
//! Maximum order kMaxOrder = 20 (1771 terms in 3D, 231 in 2D) is a compile-time capacity: the order p
//! is a runtime argument in 0 .. kMaxOrder, and only small per-axis tables are sized from kMaxOrder.
//! 20, not 16: the 3D Plummer sphere needs p = 20 in double to reach a relative L2 error of 1e-6
//! (the error falls about 2.4x every two orders there; docs/design.md §16).

#include <cstdint>

#include "core/hd.h"

namespace nf::farfield {

//! Largest expansion order the operators accept (the capacity of their per-axis tables).
inline constexpr int kMaxOrder = 20;

//! b(b+1)/2, the number of 2D multi-indices of degree < b (and of 3D tails of degree < b).
NF_HD constexpr int triangle(int b) { return b * (b + 1) / 2; }

//! Number of multi-indices with |n| <= p: (p+1)(p+2)/2 in 2D, (p+1)(p+2)(p+3)/6 in 3D; 0 for p < 0.
template <int D>
NF_HD constexpr int terms(int p) {
  static_assert(D == 2 || D == 3, "dimension must be 2 or 3");
  return D == 2 ? (p + 1) * (p + 2) / 2 : (p + 1) * (p + 2) * (p + 3) / 6;
}

//! Index of the first term of degree d (the number of terms of lower degree).
template <int D>
NF_HD constexpr int degree_start(int d) {
  return terms<D>(d - 1);
}

//! Index of the first term of the row (degree d, tail degree b = n_y + n_z), 0 <= b <= d.
template <int D>
NF_HD constexpr int row_start(int d, int b) {
  return degree_start<D>(d) + (D == 3 ? triangle(b) : b);
}

//! Terms in a row of tail degree b: b + 1 in 3D (n_z = 0 .. b), 1 in 2D.
template <int D>
NF_HD constexpr int row_length(int b) {
  return D == 3 ? b + 1 : 1;
}

//! A multi-index (n_z = 0 in 2D).
struct MultiIndex {
  int x = 0, y = 0, z = 0;

  //! |n|.
  NF_HD constexpr int degree() const { return x + y + z; }
  //! Component a (0 = x, 1 = y, 2 = z).
  NF_HD constexpr int operator[](int a) const { return a == 0 ? x : a == 1 ? y : z; }
  //! n + k, componentwise.
  NF_HD constexpr MultiIndex operator+(const MultiIndex& k) const { return {x + k.x, y + k.y, z + k.z}; }
  //! n - k, componentwise (not checked: n - k may have negative components).
  NF_HD constexpr MultiIndex operator-(const MultiIndex& k) const { return {x - k.x, y - k.y, z - k.z}; }
  //! k <= n componentwise.
  NF_HD constexpr bool contains(const MultiIndex& k) const { return k.x <= x && k.y <= y && k.z <= z; }
};

//! The unit multi-index e_a.
NF_HD constexpr MultiIndex unit(int a) { return {a == 0 ? 1 : 0, a == 1 ? 1 : 0, a == 2 ? 1 : 0}; }

//! Position of n in a coefficient array (n.z must be 0 in 2D).
template <int D>
NF_HD constexpr int index(const MultiIndex& n) {
  return row_start<D>(n.degree(), n.y + n.z) + n.z;
}

//! The multi-index at position i (inverse of `index`): O(p) steps, for set-up and tests, not for
//! inner loops (the operators walk rows instead).
template <int D>
NF_HD constexpr MultiIndex multi_index(int i) {
  int d = 0;
  while (degree_start<D>(d + 1) <= i) ++d;
  int b = 0;
  while (b < d && row_start<D>(d, b + 1) <= i) ++b;
  const int z = i - row_start<D>(d, b);
  return {d - b, b - z, z};
}

//! terms<D>(p) for a run-time dimension (2 or 3).
constexpr std::uint64_t terms_of(int dim, int p) {
  return p < 0 ? 0 : dim == 2 ? std::uint64_t(terms<2>(p)) : std::uint64_t(terms<3>(p));
}

//! C(p+2D, 2D): the pairs of multi-indices (n, k) with |n| + |k| <= p, summed as the operators
//! run them (for each k, the terms(p - |k|) n that contribute): M2L's multiply-adds at order p.
constexpr std::uint64_t coefficient_pairs(int dim, int p) {
  std::uint64_t sum = 0;
  for (int d = 0; d <= p; ++d) sum += (terms_of(dim, d) - terms_of(dim, d - 1)) * terms_of(dim, p - d);
  return sum;
}

static_assert(terms<2>(kMaxOrder) == 231 && terms<3>(kMaxOrder) == 1771, "capacity at kMaxOrder");
static_assert(index<3>({0, 0, 2}) == 9 && index<3>({1, 1, 0}) == 5 && index<2>({0, 2}) == 5, "order");
static_assert(index<3>(multi_index<3>(700)) == 700 && index<2>(multi_index<2>(100)) == 100, "inverse");

}  // namespace nf::farfield
