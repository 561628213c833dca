#pragma once
//! The sums of M2L's thread-per-target kernel (farfield/m2l_thread_gpu.h; docs/design.md §16, "M2L
//! at low orders" and "The wide variant"): one translation into a thread's locals, every index a
//! constant at a compile-time order. CUDA only; included by m2l_thread_gpu.cu.

#include <cstdint>
#include <type_traits>

#include "core/hd.h"
#include "farfield/m2l_thread_orders.h"
#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"

namespace nf::farfield::thread_sums {

// Entries a 16-byte load holds.
template <class T>
constexpr int kVec = 16 / int(sizeof(T));

// A row's stride: terms rounded up to whole 16-byte loads.
template <int D, class T, int P>
constexpr int kStride = thread_row_stride(terms<D>(P), int(sizeof(T)));

// A row in 16-byte loads: from global memory through the read-only path, or (Shared) from shared
// memory, where __ldg cannot read (the warp's staged moments: m2l_thread_gpu.cu, walk_staged).
template <int N, bool Shared = false, class T>
__device__ __forceinline__ void load_row(const T* __restrict__ from, T (&to)[N]) {
  using V = std::conditional_t<sizeof(T) == 4, float4, double2>;
#pragma unroll
  for (int i = 0; i < N; i += kVec<T>) {
    const V* at = reinterpret_cast<const V*>(from + i);
    const V v = Shared ? *at : __ldg(at);
    if constexpr (sizeof(T) == 4) {
      to[i] = v.x, to[i + 1] = v.y, to[i + 2] = v.z, to[i + 3] = v.w;
    } else {
      to[i] = v.x, to[i + 1] = v.y;
    }
  }
}

// acc_k += sum_{|n| <= P - |k|} (-1)^|n| m_n d_{n+k}, by rows (multi_index.h): n + k of rows
// (dn, bn) and (dk, bk) lies in row (dn + dk, bn + bk) at position zn + zk. Every index is a
// constant once the loops are unrolled. The moments come in 16-byte loads from a row of
// kStride entries (16-byte aligned), each load when its first moment is needed.
template <int D, class T, int P, bool Staged = false>
__device__ __forceinline__ void translate(const T* __restrict__ m, const T (&d)[kStride<D, T, P>],
                                          T (&acc)[terms<D>(P)]) {
  T chunk[kVec<T>];
#pragma unroll
  for (int dn = 0; dn <= P; ++dn)
#pragma unroll
    for (int bn = 0; bn <= dn; ++bn)
#pragma unroll
      for (int zn = 0; zn < row_length<D>(bn); ++zn) {
        const int n = row_start<D>(dn, bn) + zn;
        if (n % kVec<T> == 0) load_row<kVec<T>, Staged>(m + n, chunk);
        const T mn = chunk[n % kVec<T>];
        const T s = dn % 2 ? -mn : mn;
#pragma unroll
        for (int dk = 0; dk <= P - dn; ++dk)
#pragma unroll
          for (int bk = 0; bk <= dk; ++bk)
#pragma unroll
            for (int zk = 0; zk < row_length<D>(bk); ++zk) {
              T& a = acc[row_start<D>(dk, bk) + zk];
              a = fma(s, d[row_start<D>(dn + dk, bn + bk) + zn + zk], a);
            }
      }
}

// The wide variant (3D, orders above kThreadMaxOrder): the offset's derivatives stay in memory in
// rows (degree d, tail degree b) that each start on a 16-byte boundary (kRowPad entries), and are
// read a row at a time as broadcasts; the moments of one degree at a time sit in registers.
template <class T>
NF_HD constexpr int row_pad(int b) {
  return (b + kVec<T>) / kVec<T> * kVec<T>;
}
template <class T>
NF_HD constexpr int aligned_row(int d, int b) {  // first entry of row (d, b) in the aligned table
  int at = 0;
  for (int e = 0; e < d; ++e)
    for (int c = 0; c <= e; ++c) at += row_pad<T>(c);
  for (int c = 0; c < b; ++c) at += row_pad<T>(c);
  return at;
}
template <class T, int P>
constexpr int kAligned = aligned_row<T>(P + 1, 0);  // entries an offset's aligned table holds

// f(integral_constant<int, i>) for i = Begin .. End - 1: every index a constant without relying on
// the unroller (the wide variant's nests are too large for it to unroll in full).
template <int Begin, int End, class F>
__device__ __forceinline__ void static_for(F&& f) {
  if constexpr (Begin < End) {
    f(std::integral_constant<int, Begin>{});
    static_for<Begin + 1, End>(f);
  }
}

// The moments of degree dn go through registers in bands of rows bn = band_first(dn, j) ..
// band_first(dn, j + 1) - 1 of at most kBand moments (fewer registers held; a row of d that two bands
// read is loaded twice).
inline constexpr int kBand = 24;
NF_HD constexpr int band_first(int dn, int j) {  // first row bn of band j of degree dn (dn + 1 at the end)
  int bn = 0;
  for (int k = 0; k < j && bn <= dn; ++k)
    for (int held = 0; bn <= dn && held + bn + 1 <= kBand; ++bn) held += bn + 1;
  return bn > dn ? dn + 1 : bn;
}
NF_HD constexpr int bands(int dn) {
  int j = 0;
  while (band_first(dn, j) <= dn) ++j;
  return j;
}

// acc_k += sum (-1)^|n| m_n d_{n+k} over |n| + |k| <= P, by degree pairs: for a band of the moments
// of degree dn (registers) and each target degree dk, every row (dn + dk, b) of d the band pairs
// with is loaded once and serves each pair of rows (dn, bn), (dk, b - bn): 409 row loads for 3003
// multiply-adds at P = 8 with whole degrees as bands.
// P may be below the order the locals acc were sized for (the orders per offset): the rows of
// degree <= P come first in m, d and acc alike.
template <class T, int P, int N>
__device__ __forceinline__ void translate_wide(const T* __restrict__ m, const T* __restrict__ d, T (&acc)[N]) {
  static_assert(terms<3>(P) <= N, "the locals hold every term of order P");
  constexpr int V = kVec<T>;
  static_for<0, P + 1>([&](auto DN) {
    constexpr int dn = decltype(DN)::value;
    static_for<0, bands(dn)>([&](auto J) {
      constexpr int b0 = band_first(dn, decltype(J)::value), b1 = band_first(dn, decltype(J)::value + 1);
      constexpr int i0 = row_start<3>(dn, b0), count = row_start<3>(dn, b1) - i0;  // b1 <= dn + 1
      T mv[count];
      static_for<i0 / V, (i0 + count + V - 1) / V>([&](auto Q) {
        constexpr int q = decltype(Q)::value;
        T chunk[V];
        load_row<V>(m + q * V, chunk);
        static_for<0, V>([&](auto I) {
          constexpr int i = q * V + decltype(I)::value;
          if constexpr (i >= i0 && i < i0 + count) mv[i - i0] = dn % 2 ? -chunk[i - q * V] : chunk[i - q * V];
        });
      });
      static_for<0, P - dn + 1>([&](auto DK) {
        constexpr int dk = decltype(DK)::value;
        static_for<b0, b1 + dk>([&](auto B) {
          constexpr int b = decltype(B)::value, at = aligned_row<T>(dn + dk, b);
          T row[row_pad<T>(b)];
          static_for<0, row_pad<T>(b) / V>([&](auto Q) {
            constexpr int q = decltype(Q)::value;
            T chunk[V];
            load_row<V>(d + at + q * V, chunk);
            static_for<0, V>([&](auto I) { row[q * V + decltype(I)::value] = chunk[decltype(I)::value]; });
          });
          static_for<(b - dk > b0 ? b - dk : b0), (b < b1 - 1 ? b : b1 - 1) + 1>([&](auto BN) {
            constexpr int bn = decltype(BN)::value, bk = b - bn;
            static_for<0, bn + 1>([&](auto ZN) {
              constexpr int zn = decltype(ZN)::value;
              static_for<0, bk + 1>([&](auto ZK) {
                constexpr int zk = decltype(ZK)::value;
                T& a = acc[row_start<3>(dk, bk) + zk];
                a = fma(mv[row_start<3>(dn, bn) - i0 + zn], row[zn + zk], a);
              });
            });
          });
        });
      });
    });
  });
}

}  // namespace nf::farfield::thread_sums
