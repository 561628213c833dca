#pragma once
//! The derivative tensor of the softened Green's function, D_n(R) = d^n G(R) for |n| <= p, with
//! G(R) = (|R|^2 + eps^2)^(-1/2) (docs/design.md §16): the kernel of the far field's M2L.
//!
//! The recursion for radial functions (as for 1/r, with r^2 replaced by r^2 + eps^2): with
//! f(s) = (s + eps^2)^(-1/2) and F_m(s) = 2^m f^(m)(s) = (-1)^m (2m-1)!! (s + eps^2)^(-(2m+1)/2),
//! T^(m)_n = d^n [F_m(|R|^2)] satisfies
//!
//!   T^(m)_0 = F_m(|R|^2),   T^(m)_{n+e_a} = R_a T^(m+1)_n + n_a T^(m+1)_{n-e_a},   D_n = T^(0)_n.
//!
//! T^(m) is needed for |n| <= p - m. It is computed in place in the output array: level m = p, then
//! p - 1, ..., 0; within a level, degrees from high to low, so that degree d of level m overwrites
//! degree d of level m + 1 only after the degrees above it (the only readers) are done. No scratch
//! beyond the F_m (kMaxOrder + 1 scalars on the stack).

#include "farfield/multi_index.h"
#include "physics/interaction.h"

namespace nf::farfield {

//! out[index(n)] = D_n(R) for every |n| <= p (0 <= p <= kMaxOrder), R = r[0 .. D).
//!
//! Finite for eps > 0 even at R = 0, as long as (2p-1)!! (|R|^2 + eps^2)^(-(2p+1)/2) fits in T
//! (store expansions in units of the box side, expansion.h, so that it does); undefined (inf, NaN)
//! for eps = 0 at R = 0, which an FMM never asks for (M2L pairs are well separated).
//!
//! Cost: one reciprocal square root, 2p + D + 1 multiplies for |R|^2 + eps^2 and the F_m, then one multiply and
//! one multiply-add per term and level, sum_m terms(p - m): C(p+4, 4) in 3D (495 at p = 8, 4845 at
//! p = 16), C(p+3, 3) in 2D (165 at p = 8); about 2 C(p+4, 4) multiply-adds in 3D.
template <int D, class T>
NF_HD void derivatives(const T (&r)[D], T eps2, int p, T* out) {
  T s = r[0] * r[0] + eps2;
  for (int a = 1; a < D; ++a) s = r[a] * r[a] + s;
  const T inv = reciprocal_sqrt(s);
  const T inv2 = inv * inv;
  T F[kMaxOrder + 1];  // F_m(|R|^2) = -(2m-1) F_{m-1} / (|R|^2 + eps^2)
  F[0] = inv;
  for (int m = 1; m <= p; ++m) F[m] = T(1 - 2 * m) * inv2 * F[m - 1];

  for (int m = p; m >= 0; --m) {
    for (int d = p - m; d >= 1; --d) {
      // Rows with n_x >= 1: a = x. n - e_x is the same row position one degree down.
      for (int b = 0; b < d; ++b) {
        T* t = out + row_start<D>(d, b);
        const T* t1 = out + row_start<D>(d - 1, b);
        if (d - b >= 2) {
          const T* t2 = out + row_start<D>(d - 2, b);
          const T c = T(d - b - 1);  // n_x - 1
          for (int z = 0; z < row_length<D>(b); ++z) t[z] = r[0] * t1[z] + c * t2[z];
        } else {
          for (int z = 0; z < row_length<D>(b); ++z) t[z] = r[0] * t1[z];
        }
      }
      // The last row, n_x = 0: (0, d - z, z). a = y while n_y >= 1, else (3D, n = (0, 0, d)) a = z.
      T* t = out + row_start<D>(d, d);
      const T* t1 = out + row_start<D>(d - 1, d - 1);
      const T* t2 = d >= 2 ? out + row_start<D>(d - 2, d - 2) : out;  // read only when d >= 2
      for (int z = 0; z < row_length<D>(d); ++z) {
        const int ny = d - z;
        if (ny >= 1)
          t[z] = ny >= 2 ? r[1] * t1[z] + T(ny - 1) * t2[z] : r[1] * t1[z];
        else
          t[z] = z >= 2 ? r[D - 1] * t1[z - 1] + T(z - 1) * t2[z - 2] : r[D - 1] * t1[z - 1];
      }
    }
    out[0] = F[m];
  }
}

}  // namespace nf::farfield
