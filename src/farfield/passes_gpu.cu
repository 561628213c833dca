// The far field's passes on the GPU (farfield/passes_gpu.h): kernels and their drivers.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/expansion.h"
#include "farfield/l2p_fixed.cuh"
#include "farfield/passes_gpu.h"
#include "tree/adaptive.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {


// Centre of leaf box `key` (double, as the CPU method computes it).
template <int D>
__device__ void leaf_centre(std::uint64_t key, const LeafGeometry& g, double (&c)[D]) {
  std::uint32_t ic[D];
  morton_coords<D>(key, ic);
  for (int a = 0; a < D; ++a) c[a] = g.origin[a] + (ic[a] + 0.5) * g.side;
}


// P2M's work units: four consecutive x exponents a0 = 4k .. 4k + 3 of one column, the terms with
// y exponent j and z exponent l (2D: l = 0), tail degree s = j + l. Units run chunk by chunk (k),
// each chunk over the columns with s <= p - 4k in tail degree order, so that a unit's index
// decodes in a few operations.
template <int D>
__host__ __device__ inline int p2m_columns(int top) {  // columns with tail degree <= top
  return top < 0 ? 0 : D == 3 ? (top + 1) * (top + 2) / 2 : top + 1;
}

struct P2MUnit {
  int j, l, a0;
};

template <int D>
__device__ inline P2MUnit p2m_unit(int p, int u) {
  int k = 0;
  for (int n = p2m_columns<D>(p); u >= n; n = p2m_columns<D>(p - 4 * k)) u -= n, ++k;
  if constexpr (D == 2) return {u, 0, 4 * k};
  int s = int((sqrtf(8.0f * float(u) + 1.0f) - 1.0f) * 0.5f);  // s(s+1)/2 <= u < (s+1)(s+2)/2
  while (s * (s + 1) / 2 > u) --s;
  while ((s + 1) * (s + 2) / 2 <= u) ++s;
  const int l = u - s * (s + 1) / 2;
  return {s - l, l, 4 * k};
}

// A P2M block's layout: per particle its factors [x: m y_x^a / a!, zeros to a multiple of 4 | y | z],
// `groups` groups of threads that each take every groups-th particle, a partial sum per group and term.
struct P2MShape {
  int row_x, stride, units, groups;
};

template <int D, class T>
P2MShape p2m_shape(int p, int threads) {
  P2MShape s;
  s.row_x = (p + 4) & ~3;
  s.stride = (s.row_x + (D - 1) * (p + 1) + 3) & ~3;
  if (s.stride % 32 == 0) s.stride += 4;  // neighbouring particles' rows in other banks
  s.units = 0;
  for (int k = 0; 4 * k <= p; ++k) s.units += p2m_columns<D>(p - 4 * k);
  s.groups = s.units >= threads ? 1 : std::min(threads / s.units, 8);
  return s;
}

template <int D, class T>
std::size_t p2m_shared_bytes(const P2MShape& s, int p, int threads) {
  return (std::size_t(threads) * s.stride + std::size_t(s.groups) * terms<D>(p)) * sizeof(T);
}

// 1 / j for the powers' recurrences (j = 1 .. kMaxOrder; a warp reads one entry at a time).
__constant__ double kInverse[kMaxOrder + 1] = {0,       1,        1. / 2,  1. / 3,  1. / 4,  1. / 5,  1. / 6,
                                              1. / 7,  1. / 8,   1. / 9,  1. / 10, 1. / 11, 1. / 12, 1. / 13,
                                              1. / 14, 1. / 15,  1. / 16, 1. / 17, 1. / 18, 1. / 19, 1. / 20};

template <class T>
__device__ __forceinline__ void load4(const T* p, T (&v)[4]) {
  if constexpr (std::is_same_v<T, float>) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
    const double2 q0 = *reinterpret_cast<const double2*>(p), q1 = *reinterpret_cast<const double2*>(p + 2);
    v[0] = q0.x, v[1] = q0.y, v[2] = q1.x, v[3] = q1.y;
  }
}

// One block of Threads per leaf box. Threads particles at a time put their factors in shared memory
// (r in box units, the mass folded into the x factors); then each thread sums its unit's four
// terms M_(a,j,l) += (m x^a / a!) (y^j / j! z^l / l!) over its group's particles in order: one
// product of the y and z factors and one 4-wide load of x factors for four independent
// multiply-adds. The groups' partial sums stay in shared memory across chunks and are added in
// group order at the end. The shared loads bound it (ncu: 86% of the memory throughput at 128
// threads); a thread per term (three loads and a dependent multiply-add a product) took 1.89 ms at
// p = 8 on 3D uniform 2^24, level 6 (H100), this kernel about 1.1 ms (docs/design.md §16).
template <int D, class T, int Threads>
__global__ void __launch_bounds__(Threads) p2m_kernel(const Body<T>* __restrict__ sorted, DeviceLevel leaf,
                                                          LeafGeometry g, int p, int terms, P2MShape shape,
                                                          T* __restrict__ M) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* pw = reinterpret_cast<T*>(smem);     // [Threads][stride]
  T* part = pw + Threads * shape.stride;  // [groups][terms]
  const std::uint32_t b = blockIdx.x;
  if (leaf.flags && (leaf.flags[b] & adaptive::kExpanded)) return;  // an adaptive tree's box: M2M gives its moments
  for (int i = threadIdx.x; i < shape.groups * terms; i += Threads) part[i] = T(0);
  __syncthreads();
  double c[D];
  leaf_centre<D>(leaf.key[b], g, c);
  const std::uint32_t first = leaf.first[b], last = leaf.last ? leaf.last[b] : leaf.first[b + 1];
  const int work = shape.groups * shape.units, row_y = shape.row_x, row_z = shape.row_x + p + 1;
  for (std::uint32_t base = first; base < last; base += Threads) {
    const int count = int(min(std::uint32_t(Threads), last - base));
    if (threadIdx.x < count) {
      const Body<T> body = sorted[base + threadIdx.x];
      const double x[3] = {double(body.x), double(body.y), double(body.z)};
      T* w = pw + threadIdx.x * shape.stride;
      for (int a = 0; a < D; ++a) {
        const T r = T((x[a] - c[a]) / g.side);
        T* out = w + (a == 0 ? 0 : a == 1 ? row_y : row_z);
        T f = T(1);  // r^j / j!
        out[0] = a == 0 ? body.m : T(1);
        for (int j = 1; j <= p; ++j) {
          f = f * r * T(kInverse[j]);
          out[j] = a == 0 ? body.m * f : f;
        }
        if (a == 0)
          for (int j = p + 1; j < shape.row_x; ++j) out[j] = T(0);
      }
    }
    __syncthreads();
    for (int wi = threadIdx.x; wi < work; wi += Threads) {
      const int group = wi / shape.units;
      const auto [j, l, a0] = p2m_unit<D>(p, wi - group * shape.units);
      T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
      const T* w = pw + group * shape.stride;
#pragma unroll 4
      for (int i = group; i < count; i += shape.groups, w += shape.groups * shape.stride) {
        T xv[4];
        load4(w + a0, xv);
        const T yz = D == 3 ? w[row_y + j] * w[row_z + l] : w[row_y + j];
        s0 += xv[0] * yz;
        s1 += xv[1] * yz;
        s2 += xv[2] * yz;
        s3 += xv[3] * yz;
      }
      T* out = part + group * terms;
      const int s = j + l, top = p - s;  // x exponents a0 .. min(a0 + 3, top)
      out[row_start<D>(s + a0, s) + l] += s0;
      if (a0 + 1 <= top) out[row_start<D>(s + a0 + 1, s) + l] += s1;
      if (a0 + 2 <= top) out[row_start<D>(s + a0 + 2, s) + l] += s2;
      if (a0 + 3 <= top) out[row_start<D>(s + a0 + 3, s) + l] += s3;
    }
    __syncthreads();
  }
  for (int n = threadIdx.x; n < terms; n += Threads) {
    T sum = part[n];
    for (int group = 1; group < shape.groups; ++group) sum += part[group * terms + n];
    M[std::size_t(b) * terms + n] += sum;
  }
}

// One thread per particle, the order P a template argument (farfield/l2p_fixed.cuh).
template <int D, class T, int P>
__global__ void l2p_kernel(const Body<T>* __restrict__ sorted, const std::uint32_t* __restrict__ particle_box,
                           std::uint32_t n, DeviceLevel leaf, LeafGeometry g, int p, int terms, const T* __restrict__ L,
                           Acc4<T>* __restrict__ acc) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t b = particle_box[i];
  double c[D];
  leaf_centre<D>(leaf.key[b], g, c);
  const Body<T> body = sorted[i];
  const double x[3] = {double(body.x), double(body.y), double(body.z)};
  T y[D];
  for (int a = 0; a < D; ++a) y[a] = T((x[a] - c[a]) / g.side);
  T a[D] = {};
  l2p_fixed<D, T, P>(L + std::size_t(b) * terms, y, a);
  const T scale = T(1.0 / (g.side * g.side));
  Acc4<T> add{a[0] * scale, a[1] * scale, T(0), T(0)};
  if constexpr (D == 3) add.z = a[2] * scale;
  add_into(&acc[i], add);
}

// The coefficients of one M2L work unit: up to 4 consecutive k of one degree dk that are
// consecutive in memory (3D: one row (dk, bk), z from z0; 2D: tails b from z0). For a fixed n
// their derivatives D_{n+k} are consecutive too, so a lane sums the 4 with a window of 4
// derivatives that slides along the run of n: one load of a moment and one of a derivative per 4
// multiply-adds.
constexpr unsigned char kNone = 255;

struct Quad {
  int dk, bk, z0, count;
};

__device__ inline int pack(const Quad& q) { return q.dk | q.bk << 8 | q.z0 << 16 | q.count << 24; }
__device__ inline Quad unpack(int v) { return {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24}; }

// The quads of order p in degree order; returns how many (at most terms).
template <int D>
__device__ int make_quads(int p, int* out) {
  int q = 0;
  for (int dk = 0; dk <= p; ++dk) {
    if constexpr (D == 3) {
      for (int bk = 0; bk <= dk; ++bk)
        for (int z0 = 0; z0 <= bk; z0 += 4) out[q++] = pack({dk, bk, z0, min(4, bk + 1 - z0)});
    } else {
      for (int b0 = 0; b0 <= dk; b0 += 4) out[q++] = pack({dk, b0, 0, min(4, dk + 1 - b0)});
    }
  }
  return q;
}

// L_k += sum_n (-1)^|n| M_n D_{n+k} for the k of quad u, for the target whose moments are the
// column `target` of Mt (stride S); Dt padded with 4 zeros past terms(p).
template <class T, int S>
__device__ __forceinline__ void slide(const T* __restrict__ m, const T* __restrict__ g, int length, T& p0, T& p1, T& p2,
                                      T& p3) {
  T d0 = g[0], d1 = g[1], d2 = g[2];
  for (int z = 0; z < length; ++z) {
    const T d3 = g[z + 3], mv = m[z * S];
    p0 += mv * d0;
    p1 += mv * d1;
    p2 += mv * d2;
    p3 += mv * d3;
    d0 = d1, d1 = d2, d2 = d3;
  }
}

template <int D, class T, int S>
__device__ __forceinline__ void m2l_quad(const Quad& u, int p, const T* Mt, const T* Dt, int target, T& a0, T& a1,
                                         T& a2, T& a3) {
  for (int dn = 0; dn <= p - u.dk; ++dn) {
    T p0 = T(0), p1 = T(0), p2 = T(0), p3 = T(0);
    if constexpr (D == 3) {
      for (int bn = 0; bn <= dn; ++bn)
        slide<T, S>(Mt + row_start<3>(dn, bn) * S + target, Dt + row_start<3>(u.dk + dn, u.bk + bn) + u.z0, bn + 1, p0,
                    p1, p2, p3);
    } else {
      slide<T, S>(Mt + degree_start<2>(dn) * S + target, Dt + degree_start<2>(u.dk + dn) + u.bk, dn + 1, p0, p1, p2, p3);
    }
    if (dn & 1) {
      a0 -= p0, a1 -= p1, a2 -= p2, a3 -= p3;
    } else {
      a0 += p0, a1 += p1, a2 += p2, a3 += p3;
    }
  }
}

// M2L over TB target boxes per block (see passes_gpu.h). Shared memory: the moments of the
// current offset's sources and the targets' local coefficients, [term][target] with a padded
// stride; the offset's derivatives (4 zeros after them); the quads; for each (offset, target) the
// source's position in the target's list (kNone: none; a list has at most 189 entries).
template <int D, class T, int TB>
__global__ void __launch_bounds__(512, 2) m2l_kernel(DeviceLevel level, DeviceList list, int p, OffsetOrders orders,
                                                     int terms, const T* __restrict__ table, const T* __restrict__ M,
                                                     T* __restrict__ L) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int kOff = kOffsets<D>;
  constexpr int S = TB + 1;
  T* Mt = reinterpret_cast<T*>(smem);
  T* Lt = Mt + terms * S;
  T* Dt = Lt + terms * S;
  int* quads = reinterpret_cast<int*>(Dt + terms + 4);
  unsigned char* pos = reinterpret_cast<unsigned char*>(quads + terms);  // [offset][target]: list position
  const int tid = threadIdx.x, threads = blockDim.x;
  const std::uint32_t t0 = blockIdx.x * TB;
  const int nt = int(min(std::uint32_t(TB), level.boxes - t0));
  for (int i = tid; i < kOff * TB; i += threads) pos[i] = kNone;
  for (int i = tid; i < terms * S; i += threads) Lt[i] = T(0);
  if (tid < 4) Dt[terms + tid] = T(0);
  __shared__ int quad_count;
  if (tid == 0) quad_count = make_quads<D>(p, quads);
  const int warp = tid / 32, lane = tid % 32, warps = threads / 32;
  __syncthreads();
  for (int t = warp; t < nt; t += warps) {
    std::uint32_t ct[D];
    morton_coords<D>(level.key[t0 + t], ct);
    const std::uint32_t begin = list.offset[t0 + t], end = list.offset[t0 + t + 1];
    for (std::uint32_t j = begin + lane; j < end; j += 32) {
      std::uint32_t cs[D];
      morton_coords<D>(level.key[list.ids[j]], cs);
      int o = 0;
      for (int a = D - 1; a >= 0; --a) o = o * 7 + (int(ct[a]) - int(cs[a]) + 3);
      pos[o * TB + t] = static_cast<unsigned char>(j - begin);
    }
  }
  __syncthreads();
  constexpr int kSub = 32 / TB;  // quads a warp computes at once
  const int target = lane % TB, qstep = warps * kSub, nq = quad_count;
  for (int o = 0; o < kOff; ++o) {
    if (!__syncthreads_or(tid < TB && pos[o * TB + tid] != kNone)) continue;
    int R[D];  // offset o's order
    for (int a = 0, v = o; a < D; ++a, v /= 7) R[a] = v % 7 - 3;
    const int order = orders.at<D>(R);
    for (int n = tid; n < terms; n += threads) Dt[n] = table[std::size_t(o) * terms + n];
    for (int t = warp; t < TB; t += warps) {  // a warp per target: coalesced, no division
      const int j = pos[o * TB + t];
      const T* m = j != kNone ? M + std::size_t(list.ids[list.offset[t0 + t] + j]) * terms : nullptr;
      for (int n = lane; n < terms; n += 32) Mt[n * S + t] = m ? m[n] : T(0);
    }
    __syncthreads();
    for (int q = warp * kSub + lane / TB; q < nq; q += qstep) {
      const Quad u = unpack(quads[q]);
      T a0 = T(0), a1 = T(0), a2 = T(0), a3 = T(0);
      m2l_quad<D, T, S>(u, order, Mt, Dt, target, a0, a1, a2, a3);
      T* out = Lt + (D == 3 ? row_start<3>(u.dk, u.bk) + u.z0 : degree_start<2>(u.dk) + u.bk) * S + target;
      out[0] += a0;
      if (u.count > 1) out[S] += a1;
      if (u.count > 2) out[2 * S] += a2;
      if (u.count > 3) out[3 * S] += a3;
    }
    __syncthreads();
  }
  for (int i = tid; i < nt * terms; i += threads) {
    const int t = i / terms, n = i - t * terms;
    L[std::size_t(t0 + t) * terms + n] += Lt[n * S + t];
  }
}

template <int D, class T, int TB>
std::size_t m2l_shared_bytes(int terms) {
  return (2 * std::size_t(terms) * (TB + 1) + terms + 4) * sizeof(T) + std::size_t(terms) * sizeof(int) +
         std::size_t(kOffsets<D>) * TB;
}

template <int D, class T, int TB>
bool launch_m2l(const DeviceLevel& level, const DeviceList& list, int p, const OffsetOrders& orders, const T* table,
                const T* M, T* L) {
  const int terms = farfield::terms<D>(p);
  const std::size_t bytes = m2l_shared_bytes<D, T, TB>(terms);
  // The opt-in limit counts the kernel's static shared memory too.
  if (bytes + gpu::static_shared_bytes(m2l_kernel<D, T, TB>) > std::size_t(gpu::shared_memory_optin())) return false;
  NF_CUDA(cudaFuncSetAttribute(m2l_kernel<D, T, TB>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  constexpr int kSub = 32 / TB;
  const int warps = std::clamp((terms + 16 * kSub - 1) / (16 * kSub), 2, 16);  // about 4 quads a warp
  m2l_kernel<D, T, TB><<<gpu::div_up(level.boxes, TB), 32 * warps, bytes>>>(level, list, p, orders, terms, table, M, L);
  NF_CUDA(cudaGetLastError());
  return true;
}

}  // namespace


template <int D, class T, int Threads>
void launch_p2m(const Body<T>* sorted, const DeviceLevel& leaf, const LeafGeometry& g, int p, T* M) {
  const P2MShape shape = p2m_shape<D, T>(p, Threads);
  const std::size_t bytes = p2m_shared_bytes<D, T>(shape, p, Threads);
  gpu::require_shared_memory(bytes, gpu::static_shared_bytes(p2m_kernel<D, T, Threads>),
                             "--order " + std::to_string(p) + " (" + std::to_string(D) + "D, " +
                                 (sizeof(T) == 4 ? "float" : "double") + "): P2M");
  if (bytes > 48 * 1024)  // 3D double from p = 10 on (97 KB at p = 20 with 128 threads)
    NF_CUDA(cudaFuncSetAttribute(p2m_kernel<D, T, Threads>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  p2m_kernel<D, T, Threads><<<leaf.boxes, Threads, bytes>>>(sorted, leaf, g, p, terms<D>(p), shape, M);
  NF_CUDA(cudaGetLastError());
}

template <int D, class T>
void p2m(const Body<T>* sorted, const DeviceLevel& leaf, const LeafGeometry& g, int p, T* M) {
  if (leaf.boxes == 0) return;
  // A block's threads: 64 (NEARFIELD_P2M_THREADS=128|256 for comparisons). On the H100 (3D float,
  // 2^24) 64 were fastest on uniform level 6 (P2M + M2M at p = 8: 1.36 ms against 1.59 and 2.50)
  // and on fmm-adaptive's Plummer (p = 10, S = 244: 3.06 ms against 3.24 and 4.53).
  static const int threads = [] {
    const char* v = std::getenv("NEARFIELD_P2M_THREADS");
    return v ? std::atoi(v) : 64;
  }();
  if (threads == 128)
    launch_p2m<D, T, 128>(sorted, leaf, g, p, M);
  else if (threads == 256)
    launch_p2m<D, T, 256>(sorted, leaf, g, p, M);
  else
    launch_p2m<D, T, 64>(sorted, leaf, g, p, M);
}

template <int D, class T>
void m2l(const DeviceLevel& level, const DeviceList& list, int p, const OffsetOrders& orders, const T* table, const T* M,
         T* L) {
  if (level.boxes == 0 || list.links == 0) return;
  if (launch_m2l<D, T, 32>(level, list, p, orders, table, M, L)) return;
  if (launch_m2l<D, T, 16>(level, list, p, orders, table, M, L)) return;
  if (launch_m2l<D, T, 8>(level, list, p, orders, table, M, L)) return;
  if (launch_m2l<D, T, 4>(level, list, p, orders, table, M, L)) return;
  throw std::runtime_error("m2l: the expansion of order " + std::to_string(p) + " does not fit in shared memory");
}

template <int D, class T>
void l2p(const Body<T>* sorted, const std::uint32_t* particle_box, std::uint32_t n, const DeviceLevel& leaf,
         const LeafGeometry& g, int p, const T* L, Acc4<T>* acc) {
  if (n == 0) return;
  dispatch_fixed_order(p, [&](auto order) {
    l2p_kernel<D, T, decltype(order)::value>
        <<<gpu::blocks_for(n, 128), 128>>>(sorted, particle_box, n, leaf, g, p, terms<D>(p), L, acc);
  });
  NF_CUDA(cudaGetLastError());
}

#define NF_PASSES(D, T)                                                                                          \
  template void p2m<D, T>(const Body<T>*, const DeviceLevel&, const LeafGeometry&, int, T*);                     \
  template void m2l<D, T>(const DeviceLevel&, const DeviceList&, int, const OffsetOrders&, const T*, const T*, T*); \
  template void l2p<D, T>(const Body<T>*, const std::uint32_t*, std::uint32_t, const DeviceLevel&, const LeafGeometry&, \
                          int, const T*, Acc4<T>*);
NF_PASSES(2, float)
NF_PASSES(2, double)
NF_PASSES(3, float)
NF_PASSES(3, double)
#undef NF_PASSES

}  // namespace nf::farfield
