// The older M2L kernel on the GPU (farfield/passes_gpu.h: m2l), for orders whose moments leave no
// room in shared memory for a slice of the sibling-group tables (m2l_gpu.h), and NEARFIELD_M2L=direct.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

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
  m2l_kernel<D, T, TB><<<gpu::div_up(level.boxes, TB), 32 * warps, bytes, gpu::launch_stream()>>>(level, list, p, orders, terms, table, M, L);
  NF_CUDA(cudaGetLastError());
  return true;
}

}  // namespace

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

template void m2l<2, float>(const DeviceLevel&, const DeviceList&, int, const OffsetOrders&, const float*, const float*,
                            float*);
template void m2l<2, double>(const DeviceLevel&, const DeviceList&, int, const OffsetOrders&, const double*,
                             const double*, double*);
template void m2l<3, float>(const DeviceLevel&, const DeviceList&, int, const OffsetOrders&, const float*, const float*,
                            float*);
template void m2l<3, double>(const DeviceLevel&, const DeviceList&, int, const OffsetOrders&, const double*,
                             const double*, double*);

}  // namespace nf::farfield
