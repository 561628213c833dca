#pragma once
//! L2P at a compile-time order on the GPU (docs/design.md §16, "P2M and L2P"): the same
//! acceleration as expansion.h's l2p, sum_{|k| < p} L_{k+e_a} y^k / k!, summed by columns.
//!
//! A column is the set of terms with one (y, z) exponent pair (j, l) (2D: one y exponent j) and
//! x exponents a = 0 .. p - j - l. With X_a = y_x^a / a! (Y, Z alike), a column's part of the
//! potential is Q = sum_a L_(a,j,l) X_a times Y_j Z_l, and of the gradient
//!   d/dx: Q' Y_j Z_l,  Q' = sum_(a >= 1) L_(a,j,l) X_(a-1);  d/dy: Q Y_(j-1) Z_l;  d/dz: Q Y_j Z_(l-1).
//! Each coefficient is read once and costs two multiply-adds; with the order a template argument
//! the powers live in registers and every index is a constant. The generic l2p reads each
//! coefficient three times (once per component) and indexes its powers at run time, from the
//! stack, and was bound by instruction issue.

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "farfield/multi_index.h"

namespace nf::farfield {


template <int D, class T, int P>
__device__ __forceinline__ void l2p_fixed(const T* __restrict__ L, const T (&y)[D], T (&acc)[D]) {
  T X[P + 1], Y[P + 1], Z[P + 1];
  X[0] = Y[0] = Z[0] = T(1);
#pragma unroll
  for (int j = 1; j <= P; ++j) {
    const T inv_j = T(1) / T(j);
    X[j] = X[j - 1] * y[0] * inv_j;
    Y[j] = Y[j - 1] * y[1] * inv_j;
    if constexpr (D == 3) Z[j] = Z[j - 1] * y[2] * inv_j;
  }
  T ax = T(0), ay = T(0), az = T(0);
#pragma unroll
  for (int s = 0; s <= P; ++s) {  // tail degree j + l
#pragma unroll
    for (int l = 0; l <= (D == 3 ? s : 0); ++l) {
      const int j = s - l;
      T q = T(0), qd = T(0);
#pragma unroll
      for (int a = 0; a <= P - s; ++a) {
        const T c = L[row_start<D>(a + s, s) + l];
        q += c * X[a];
        if (a > 0) qd += c * X[a - 1];
      }
      const T z = D == 3 ? Z[l] : T(1);
      ax += qd * (Y[j] * z);
      if (j > 0) ay += q * (Y[j - 1] * z);
      if constexpr (D == 3)
        if (l > 0) az += q * (Y[j] * Z[l - 1]);
    }
  }
  acc[0] += ax;
  acc[1] += ay;
  if constexpr (D == 3) acc[2] += az;
}

//! Calls f(std::integral_constant<int, P>{}) for P = p, 1 <= p <= sizeof...(P) (the sequence's
//! orders; by default kMaxOrder, the orders a full method takes: --order is checked before any work).
template <class F, int... P>
void dispatch_fixed_order(int p, F&& f, std::integer_sequence<int, P...>) {
  if (p < 1 || p > int(sizeof...(P)))
    throw std::logic_error("fixed-order kernel: order " + std::to_string(p) + " out of 1.." +
                           std::to_string(sizeof...(P)));
  ((p == P + 1 ? (f(std::integral_constant<int, P + 1>{}), true) : false) || ...);
}

template <class F>
void dispatch_fixed_order(int p, F&& f) {
  dispatch_fixed_order(p, std::forward<F>(f), std::make_integer_sequence<int, kMaxOrder>{});
}

}  // namespace nf::farfield
