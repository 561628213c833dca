#pragma once
//! The far field's expansion operators (docs/design.md §16): P2M, M2M, M2L, L2L and L2P for
//! Cartesian Taylor expansions of the softened Green's function G(R) = (|R|^2 + eps^2)^(-1/2),
//! truncated at total degree p, in D = 2 or 3 dimensions (2D is the 3D law in the plane z = 0).
//!
//! The potential is psi(x) = sum_j m_j G(x - x_j) and the acceleration a(x) = grad psi(x), which
//! is §1's softened force (the potential energy of particle i is -m_i psi(x_i)). With x = z_L + y
//! and x_j = z_M + r_j, Taylor expansion of G(R0 + y - r_j) (R0 = z_L - z_M) gives
//!
//!   multipole  M_n = sum_j m_j r_j^n / n!                            about z_M,
//!   local      L_k = sum_n (-1)^|n| M_n D_{n+k}(R0)                   about z_L,
//!   psi(z_L + y) = sum_k L_k y^k / k!,
//!
//! with D_n = d^n G (derivatives.h) and every sum truncated at |n| + |k| <= p. Coefficients are
//! plain arrays T[terms<D>(p)] in multi_index.h's order; every operator *adds* into its output.
//! Functions are NF_HD templates on (D, T) with p a runtime argument in 0 .. kMaxOrder; none
//! allocates. P2M, M2M, L2L and L2P keep D tables of kMaxOrder + 1 scalars on the stack (the
//! per-axis factors y_a^j / j!: 204 bytes in float, 408 in double in 3D), M2L kMaxOrder + 1 (the
//! F_m of derivatives.h); on the GPU that is local memory, L1-resident (ptxas, sm_90, 3D float:
//! 208- and 72-byte stack frames, 30-40 registers). M2L also takes a caller's buffer of terms<D>(p)
//! scalars for the derivatives, so that a kernel chooses where they live (registers cannot hold
//! them at a runtime p; a warp may share one in shared memory).
//!
//! Costs below are per call, in multiply-adds (a multiply, an add or an FMA each count one), with
//! C(p+2D, 2D) = the number of pairs (n, k) with |n| + |k| <= p: 3003 at p = 8, 74613 at p = 16 in
//! 3D; 495 and 4845 in 2D. M2L is the hot operator (up to 189 per box in 3D, 27 in 2D).
//!
//! **Units.** The operators are homogeneous in length, so they work in any unit. In float,
//! physical units fail for small boxes: at box side h, M_n ~ m h^|n| underflows and the derivative
//! recursion's F_p ~ (2p-1)!! (2h)^-(2p+1) overflows (at p = 8 already for h = 2^-10). Store every
//! expansion of a box of side h in units of h instead: P2M with r / h, M2L with R0 / h and
//! eps^2 / h^2 (both boxes of one level), M2M and L2L with ratio = h_child / h_parent (1/2), L2P with
//! y / h, its potential times 1/h and its acceleration times 1/h^2. Then M~_n = M_n / h^|n| and
//! L~_k = L_k h^(|k|+1) are O(1) at every level.

#include "farfield/derivatives.h"
#include "farfield/multi_index.h"

namespace nf::farfield {

//! y_a^j / j! for every axis a < D and j <= p: the factors of the monomials y^n / n!.
//! Cost: 2 D p multiplies (the 1/j are constants once the loop is unrolled on the GPU).
template <int D, class T>
struct Powers {
  T axis[D][kMaxOrder + 1];

  NF_HD Powers(const T (&y)[D], int p) {
    for (int a = 0; a < D; ++a) axis[a][0] = T(1);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int j = 1; j <= kMaxOrder; ++j) {
      if (j > p) break;
      const T inv_j = T(1) / T(j);
      for (int a = 0; a < D; ++a) axis[a][j] = axis[a][j - 1] * y[a] * inv_j;
    }
  }

  //! The tail factor of y^n / n! for n in row (d, b) at position z: y_y^(b-z) y_z^z / ((b-z)! z!)
  //! in 3D, y_y^b / b! in 2D (times axis[0][d - b], it is y^n / n!).
  NF_HD T tail(int b, int z) const {
    if constexpr (D == 3)
      return axis[1][b - z] * axis[2][z];
    else
      return axis[1][b];
  }
};

//! P2M: M_n += m r^n / n! for |n| <= p, one particle of mass m at r = x - z from the center z.
//! Cost: 2Dp for the powers, one per row, then 2 per term in 3D (1 in 2D): 48 + 45 + 330 = 423 at
//! p = 8 in 3D; a box of P particles costs P times that.
template <int D, class T>
NF_HD void p2m(T m, const T (&r)[D], int p, T* M) {
  const Powers<D, T> w(r, p);
  for (int d = 0; d <= p; ++d)
    for (int b = 0; b <= d; ++b) {
      const T c = m * w.axis[0][d - b];
      T* out = M + row_start<D>(d, b);
      for (int z = 0; z < row_length<D>(b); ++z) out[z] += c * w.tail(b, z);
    }
}

//! M2M: moments Mc about a child center z_c, shifted to the parent center z_p and added to Mp:
//! M'_n += sum_{k <= n} ratio^|k| M_k s^(n-k) / (n-k)!, s = shift = z_c - z_p. ratio = 1 in
//! physical units; h_child / h_parent when expansions are in box units (s then in parent units).
//! Cost: 2 per pair (k, n - k) in 3D (1 in 2D) and one per k and row of n - k: 2 C(p+6, 6) +
//! C(p+5, 5) = 7293 at p = 8 in 3D; once per non-empty box, not a hot operator.
template <int D, class T>
NF_HD void m2m(const T* Mc, const T (&shift)[D], int p, T* Mp, T ratio = T(1)) {
  const Powers<D, T> w(shift, p);
  T ratio_k = T(1);  // ratio^|k|
  for (int dk = 0; dk <= p; ++dk, ratio_k *= ratio)
    for (int bk = 0; bk <= dk; ++bk)
      for (int zk = 0; zk < row_length<D>(bk); ++zk) {
        const T mk = ratio_k * Mc[row_start<D>(dk, bk) + zk];
        for (int dj = 0; dj <= p - dk; ++dj)  // j = n - k, row (dj, bj); n in row (dk+dj, bk+bj)
          for (int bj = 0; bj <= dj; ++bj) {
            const T c = mk * w.axis[0][dj - bj];
            T* out = Mp + row_start<D>(dk + dj, bk + bj) + zk;
            for (int z = 0; z < row_length<D>(bj); ++z) out[z] += c * w.tail(bj, z);
          }
      }
}

//! Entries past terms(p) that m2l_contract may read (never use) in its derivative array.
inline constexpr int kContractPad = 4;

//! M2L contraction with precomputed derivatives: L_k += sum_{|n| <= p-|k|} (-1)^|n| M_n D_{n+k}
//! for |k| <= p, Dn = derivatives(R0) (R0 = z_L - z_M), Dn holding kContractPad entries past
//! terms(p) that are read for lanes past a run's end and never used.
//!
//! The k are taken in runs that are consecutive in memory (3D: a row (dk, bk); 2D: a whole
//! degree), four at a time: for a fixed n their derivatives D_{n+k} are consecutive too, so each
//! moment is loaded once for four multiply-adds into four independent sums (a single sum is one
//! chain of dependent additions, latency-bound: 1.8x slower at 3D p = 8..16). Each k's sum runs over
//! the same n in the same order as one k at a time, so the result is the same to the bit.
//! Cost: one multiply-add per pair (n, k): C(p+6, 6) in 3D (3003 at p = 8, 74613 at p = 16),
//! C(p+4, 4) in 2D (495 at p = 8), plus one add per k and degree of n.
template <int D, class T>
NF_HD void m2l_contract(const T* M, const T* Dn, int p, T* L) {
  for (int dk = 0; dk <= p; ++dk)
    for (int bk = 0; bk <= (D == 3 ? dk : 0); ++bk) {
      const int length = D == 3 ? bk + 1 : dk + 1;  // the run of k
      T* out = L + row_start<D>(dk, bk);
      for (int z0 = 0; z0 < length; z0 += 4) {
        T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
        for (int dn = 0; dn <= p - dk; ++dn) {
          T q0 = T(0), q1 = T(0), q2 = T(0), q3 = T(0);  // the terms of degree dn, sign applied once
          for (int bn = 0; bn <= (D == 3 ? dn : 0); ++bn) {
            const T* m = M + row_start<D>(dn, bn);
            const T* g = Dn + row_start<D>(dk + dn, bk + bn) + z0;  // D_{n+k} of the run's k at z0
            const int count = D == 3 ? bn + 1 : dn + 1;
            for (int z = 0; z < count; ++z) {
              const T mv = m[z];
              q0 += mv * g[z];
              q1 += mv * g[z + 1];
              q2 += mv * g[z + 2];
              q3 += mv * g[z + 3];
            }
          }
          if (dn & 1) {
            s0 -= q0, s1 -= q1, s2 -= q2, s3 -= q3;
          } else {
            s0 += q0, s1 += q1, s2 += q2, s3 += q3;
          }
        }
        const int lanes = length - z0;
        out[z0] += s0;
        if (lanes > 1) out[z0 + 1] += s1;
        if (lanes > 2) out[z0 + 2] += s2;
        if (lanes > 3) out[z0 + 3] += s3;
      }
    }
}

//! M2L: moments M about z_M to local coefficients added to L about z_L, R0 = z_L - z_M (never 0
//! when eps = 0). `scratch` holds terms<D>(p) + kContractPad scalars (the derivatives; overwritten).
//! Cost: derivatives (at most 2 C(p+4, 4) in 3D: 990 at p = 8) + m2l_contract (3003 + 165).
template <int D, class T>
NF_HD void m2l(const T* M, const T (&R0)[D], T eps2, int p, T* L, T* scratch) {
  derivatives<D, T>(R0, eps2, p, scratch);
  m2l_contract<D, T>(M, scratch, p, L);
}

//! L2L: local coefficients Lp about z shifted to z' = z + s (s = shift) and added to Lc:
//! L'_k += ratio^(|k|+1) sum_{n >= k, |n| <= p} L_n s^(n-k) / (n-k)!. ratio = 1 in physical units;
//! h_child / h_parent when expansions are in box units (s then in parent units). Exact: a local
//! expansion is a polynomial of degree p.
//! Cost: as M2M, 2 C(p+6, 6) + C(p+5, 5) = 7293 at p = 8 in 3D; once per box.
template <int D, class T>
NF_HD void l2l(const T* Lp, const T (&shift)[D], int p, T* Lc, T ratio = T(1)) {
  const Powers<D, T> w(shift, p);
  T ratio_k = ratio;  // ratio^(|k|+1)
  for (int dk = 0; dk <= p; ++dk, ratio_k *= ratio)
    for (int bk = 0; bk <= dk; ++bk)
      for (int zk = 0; zk < row_length<D>(bk); ++zk) {
        T sum = T(0);
        for (int dj = 0; dj <= p - dk; ++dj)  // j = n - k, row (dj, bj); n in row (dk+dj, bk+bj)
          for (int bj = 0; bj <= dj; ++bj) {
            const T* in = Lp + row_start<D>(dk + dj, bk + bj) + zk;
            T part = T(0);
            for (int z = 0; z < row_length<D>(bj); ++z) part += in[z] * w.tail(bj, z);
            sum += w.axis[0][dj - bj] * part;
          }
        Lc[row_start<D>(dk, bk) + zk] += ratio_k * sum;
      }
}

//! L2P at x = z + y: acc[a] += d psi / d y_a = sum_{|k| < p} L_{k+e_a} y^k / k!, and, when psi is
//! not null, *psi += sum_{|k| <= p} L_k y^k / k!. The acceleration is grad psi (§1's sign); as the
//! gradient of a polynomial of degree p, its truncation error is the potential's at order p - 1.
//! Cost: 2Dp for the powers, 3 per term in 3D (2 in 2D) for y^k / k! and psi, D per term of degree
//! < p for the acceleration: 48 + 3 * 165 + 3 * 120 = 903 at p = 8 in 3D, per particle.
template <int D, class T>
NF_HD void l2p(const T* L, const T (&y)[D], int p, T (&acc)[D], T* psi = nullptr) {
  const Powers<D, T> w(y, p);
  T a[D] = {};
  T phi = T(0);
  for (int d = 0; d <= p; ++d)
    for (int b = 0; b <= d; ++b) {
      const T wx = w.axis[0][d - b];
      const T* l = L + row_start<D>(d, b);
      if (d < p) {
        const T* lx = L + row_start<D>(d + 1, b);      // k + e_x
        const T* ly = L + row_start<D>(d + 1, b + 1);  // k + e_y; k + e_z is the next term
        for (int z = 0; z < row_length<D>(b); ++z) {
          const T wk = wx * w.tail(b, z);
          phi += l[z] * wk;
          a[0] += lx[z] * wk;
          a[1] += ly[z] * wk;
          if constexpr (D == 3) a[2] += ly[z + 1] * wk;
        }
      } else if (psi) {
        for (int z = 0; z < row_length<D>(b); ++z) phi += l[z] * wx * w.tail(b, z);
      }
    }
  for (int c = 0; c < D; ++c) acc[c] += a[c];
  if (psi) *psi += phi;
}

}  // namespace nf::farfield
