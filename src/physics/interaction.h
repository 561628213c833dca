#pragma once
//! The one softened-gravity interaction used by every kernel of the project, CPU and GPU.
//!
//!   a_i += m_j r_ij / (|r_ij|^2 + eps^2)^(3/2),   r_ij = x_j - x_i,   G = 1.
//!
//! A pair at zero distance contributes exactly zero: r_ij = 0 makes the numerator vanish, and
//! the guarded form also zeroes 1/d^3 for such a pair (and for d = 0), so that neither eps = 0 nor
//! an eps whose m / eps^3 overflows produces inf * 0 = NaN.

#include <cmath>
#include <limits>
#include <type_traits>

#include "core/body.h"
#include "core/hd.h"

namespace nf {

//! 1/sqrt(v): on the GPU the hardware approximation for float32 (one MUFU.RSQ; relative error
//! below 2^-22; subnormal inputs flush to zero, which only matters where the force overflows
//! float32 anyway) and CUDA's rsqrt for float64; on the CPU the correctly rounded 1/sqrt.
template <class T>
NF_HD NF_INLINE T reciprocal_sqrt(T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
  } else {
    return rsqrt(v);
  }
#else
  return T(1) / std::sqrt(v);
#endif
}

//! Softened gravity in D = 2 or 3 dimensions (2D is the same law in the plane, as in the paper).
//! Guarded = false drops the zero-distance test; use it only when `unguarded_is_safe` says so.
template <int D, class T, bool Guarded = true>
struct SoftenedGravity {
  static_assert(D == 2 || D == 3, "dimension must be 2 or 3");
  //! Floating-point operations per interaction, the convention used for GFLOP/s:
  //! 20 in 3D (GPU Gems 3), 15 in 2D (Shan & Lei, section IV-A).
  static constexpr int flops = D == 3 ? 20 : 15;

  T eps2;  //!< softening squared, already rounded to T

  //! 1/(|r|^2 + eps^2)^(3/2) and r = x_j - x_i (rz untouched in 2D).
  NF_HD NF_INLINE T inverse_cube(const Body<T>& bi, const Body<T>& bj, T& rx, T& ry, T& rz) const {
    rx = bj.x - bi.x;  // r_ij                      [D flops]
    ry = bj.y - bi.y;
    T d2 = ry * ry + eps2;  // |r|^2 + eps^2        [2*D flops]
    if constexpr (D == 3) {
      rz = bj.z - bi.z;
      d2 = rz * rz + d2;
    }
    d2 = rx * rx + d2;
    T inv = reciprocal_sqrt(d2);  // 1/sqrt         [2 flops: sqrt, divide]
    // Guarded: a coincident pair (r = 0) gives exactly 0 whatever eps, also where m / eps^3
    // overflows (eps = 1e-13 in float had given 0 * inf = NaN), and so does d2 = 0.
    if constexpr (Guarded) {
      bool coincident = rx == T(0) && ry == T(0);
      if constexpr (D == 3) coincident = coincident && rz == T(0);
      inv = d2 > T(0) && !coincident ? inv : T(0);
    }
    return inv * inv * inv;  // 1/d^3               [2 flops]
    // total with s and a_i below: 3D 3+6+2+2+1+6 = 20, 2D 2+4+2+2+1+4 = 15
  }

  //! 1/sqrt(|r_ij|^2 + eps^2): the pair's potential -m_i m_j / sqrt(...) per unit masses, with the
  //! sign left to the caller; 0 for a pair at zero distance without softening (as for the force).
  NF_HD NF_INLINE T inverse_distance(const Body<T>& bi, const Body<T>& bj) const {
    const T rx = bj.x - bi.x, ry = bj.y - bi.y;
    T d2 = ry * ry + eps2;
    if constexpr (D == 3) {
      const T rz = bj.z - bi.z;
      d2 = rz * rz + d2;
    }
    d2 = rx * rx + d2;
    return d2 > T(0) ? reciprocal_sqrt(d2) : T(0);
  }

  //! a_i += m_j r_ij / (|r_ij|^2 + eps^2)^(3/2).
  NF_HD NF_INLINE void operator()(const Body<T>& bi, const Body<T>& bj, Acc4<T>& ai) const {
    T rx, ry, rz;
    const T s = bj.m * inverse_cube(bi, bj, rx, ry, rz);  // [1 flop]
    ai.x = rx * s + ai.x;  // a_i += s r_ij            [2*D flops]
    ai.y = ry * s + ai.y;
    if constexpr (D == 3) ai.z = rz * s + ai.z;
  }

  //! Newton's third law: one evaluation updates both particles, a_i += m_j f, a_j -= m_i f.
  NF_HD NF_INLINE void mutual(const Body<T>& bi, const Body<T>& bj, Acc4<T>& ai, Acc4<T>& aj) const {
    T rx, ry, rz;
    const T inv3 = inverse_cube(bi, bj, rx, ry, rz);
    const T si = bj.m * inv3;
    const T sj = bi.m * inv3;
    ai.x = rx * si + ai.x;
    ai.y = ry * si + ai.y;
    aj.x = aj.x - rx * sj;
    aj.y = aj.y - ry * sj;
    if constexpr (D == 3) {
      ai.z = rz * si + ai.z;
      aj.z = aj.z - rz * sj;
    }
  }
};

//! True when the unguarded interaction is exact for these inputs: eps^2 rounds to a positive T
//! (so |r|^2 + eps^2 > 0) and m_max / eps^3 stays finite with room to sum, so a coincident pair
//! gives 0 * finite = 0. Kernels use the cheaper unguarded form only then.
template <class T>
inline bool unguarded_is_safe(double softening, double max_mass) {
  const T eps2 = static_cast<T>(softening * softening);
  if (!(eps2 > T(0)) || !std::isfinite(static_cast<double>(eps2))) return false;
  const double inv3 = std::pow(static_cast<double>(eps2), -1.5);
  return max_mass * inv3 < static_cast<double>(std::numeric_limits<T>::max()) / 1024.0;
}

}  // namespace nf
