// M2L a thread per target box (farfield/m2l_thread_gpu.h).
#include "farfield/m2l_thread_gpu.h"

#include <algorithm>
#include <type_traits>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/multi_index.h"
#include "farfield/l2p_fixed.cuh"
#include "farfield/passes_gpu.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

// Entries a 16-byte load holds.
template <class T>
constexpr int kVec = 16 / int(sizeof(T));

// A row's stride: terms rounded up to whole 16-byte loads.
template <int D, class T, int P>
constexpr int kStride = thread_row_stride(terms<D>(P), int(sizeof(T)));

template <int N, class T>
__device__ __forceinline__ void load_row(const T* __restrict__ from, T (&to)[N]) {
#pragma unroll
  for (int i = 0; i < N; i += kVec<T>) {
    if constexpr (sizeof(T) == 4) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(from + i));
      to[i] = v.x, to[i + 1] = v.y, to[i + 2] = v.z, to[i + 3] = v.w;
    } else {
      const double2 v = __ldg(reinterpret_cast<const double2*>(from + i));
      to[i] = v.x, to[i + 1] = v.y;
    }
  }
}

// acc_k += sum_{|n| <= P - |k|} (-1)^|n| m_n d_{n+k}, by rows (multi_index.h): n + k of rows
// (dn, bn) and (dk, bk) lies in row (dn + dk, bn + bk) at position zn + zk. Every index is a
// constant once the loops are unrolled. The moments come in 16-byte loads from a row of
// kStride entries (16-byte aligned), each load when its first moment is needed.
template <int D, class T, int P>
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
        if (n % kVec<T> == 0) load_row<kVec<T>>(m + n, chunk);
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
template <class T, int P>
__device__ __forceinline__ void translate_wide(const T* __restrict__ m, const T* __restrict__ d,
                                               T (&acc)[terms<3>(P)]) {
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

// The level's derivative table in the wide variant's aligned rows (kOffsets x kAligned), padding 0.
template <class T, int P>
__global__ void align_kernel(const T* __restrict__ table, T* __restrict__ out) {
  constexpr int N = terms<3>(P), W = kAligned<T, P>;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kOffsets<3> * W; i += gridDim.x * blockDim.x) {
    const int o = i / W, j = i % W;
    int d = 0, b = 0;
    while (aligned_row<T>(d + 1, 0) <= j) ++d;
    while (b < d && aligned_row<T>(d, b + 1) <= j) ++b;
    const int z = j - aligned_row<T>(d, b);
    out[i] = z <= b ? table[o * N + row_start<3>(d, b) + z] : T(0);
  }
}

// The level's derivative table (Table: rows [0, kOffsets) of `out`) and, where terms is not a
// whole number of 16-byte loads, its moments copied to rows of kStride entries: one row a box,
// after the table's rows (or from `out` on, without the table).
template <int D, class T, int P, bool Table>
__global__ void pad_kernel(const T* __restrict__ table, const T* __restrict__ M, std::uint32_t boxes, T* __restrict__ out) {
  constexpr int N = terms<D>(P), S = kStride<D, T, P>;
  constexpr std::uint64_t first = Table ? 0 : kOffsets<D>;  // the rows run from `first`
  const std::uint64_t rows = std::uint64_t(kOffsets<D>) + (S == N ? 0 : boxes) - first;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * S;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t r = i / S + first;
    const int n = int(i % S);
    const T* from = r < std::uint64_t(kOffsets<D>) ? table + r * N : M + (r - kOffsets<D>) * N;
    out[i] = n < N ? from[n] : T(0);
  }
}

// Warp w of the grid takes child c = w % 2^D of the 32 parents from (w / 2^D) * 32, a lane each;
// blockIdx.y of gridDim.y: its share of each list (shares add into L atomically).
template <int D, class T, int P>
__global__ void __launch_bounds__(256) thread_kernel(DeviceLevel level, DeviceLevel parents, DeviceList list,
                                                      const T* __restrict__ table, const T* __restrict__ M,
                                                      T* __restrict__ L) {
  constexpr int N = terms<D>(P), S = kStride<D, T, P>, C = 1 << D;
  const std::uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  const std::uint32_t c = w % C, g = (w / C) * 32 + lane;
  const std::uint32_t parent_count = parents.split ? *parents.split_count : parents.boxes;
  if (g >= parent_count) return;
  const std::uint32_t parent = parents.split ? parents.split[g] : g;
  std::uint32_t t = kNone;
  for (std::uint32_t i = parents.child[parent]; i < parents.child[parent + 1]; ++i)
    if ((level.key[i] & (C - 1)) == c) {
      t = i;
      break;
    }
  if (t == kNone) return;
  std::uint32_t ct[D];
  morton_coords<D>(level.key[t], ct);
  const std::uint32_t begin = list.offset[t], count = list.offset[t + 1] - begin;
  const std::uint32_t j0 = begin + count * blockIdx.y / gridDim.y, j1 = begin + count * (blockIdx.y + 1) / gridDim.y;
  T acc[N];
#pragma unroll
  for (int k = 0; k < N; ++k) acc[k] = T(0);
  // The list is read ahead: entry j + 2's id and entry j + 1's key are loaded while entry j is
  // summed, so that of the chain id -> key -> operands only the operands' loads wait (M2L 1-9%
  // faster at 3D p = 2..6 on the H200; its time is not mostly that chain's latency).
  std::uint32_t id = j0 < j1 ? list.ids[j0] : 0, next = j0 + 1 < j1 ? list.ids[j0 + 1] : id;
  std::uint64_t key = j0 < j1 ? level.key[id] : 0;
  for (std::uint32_t j = j0; j < j1; ++j) {
    const std::uint64_t key_next = level.key[next];
    const std::uint32_t after = j + 2 < j1 ? list.ids[j + 2] : next;
    std::uint32_t cs[D];
    morton_coords<D>(key, cs);
    int o = 0;  // sum_a (R0_a + 3) 7^a, R0 = target - source
#pragma unroll
    for (int a = D - 1; a >= 0; --a) o = o * 7 + (int(ct[a]) - int(cs[a]) + 3);
    if constexpr (P > kThreadMaxOrder<D, T>) {  // the wide variant
      translate_wide<T, P>(M + std::size_t(id) * S, table + o * kAligned<T, P>, acc);
    } else {
      T d[S];
      load_row<S>(table + o * S, d);
      translate<D, T, P>(M + std::size_t(id) * S, d, acc);
    }
    id = next, next = after, key = key_next;
  }
  T* out = L + std::size_t(t) * N;
  if (gridDim.y == 1) {
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] += acc[k];
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) atomicAdd(out + k, acc[k]);
  }
}

// Entries of scratch at order P: the derivative table (padded rows, or the wide variant's aligned
// ones), then the padded moments where terms is not a whole number of 16-byte loads.
template <int D, class T>
std::size_t table_entries(int p) {
  if (p > kThreadMaxOrder<D, T>) return std::size_t(kOffsets<D>) * std::size_t(aligned_row<T>(p + 1, 0));
  return std::size_t(kOffsets<D>) * std::size_t(thread_row_stride(terms<D>(p), int(sizeof(T))));
}

template <int D, class T, int P>
void launch(const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list, const T* table, const T* M,
            T* L, T* scratch) {
  // 256 threads a block: 128 measured within +-5% of it, either way by order (H200, 3D uniform 2^24
  // level 6 and Plummer level 7, p = 2..6).
  constexpr int kThreads = 256, N = terms<D>(P), S = kStride<D, T, P>;
  constexpr bool Wide = P > kThreadMaxOrder<D, T>;
  static const int resident = [] {  // blocks an SM
    int blocks = 0;
    NF_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, thread_kernel<D, T, P>, kThreads, 0));
    return std::max(blocks, 1);
  }();
  const std::size_t entries = table_entries<D, T>(P);
  if constexpr (Wide) {
    static_assert(D == 3, "the wide variant is 3D");
    align_kernel<T, P><<<gpu::blocks_for(std::uint64_t(entries), kThreads), kThreads>>>(table, scratch);
    NF_CUDA(cudaGetLastError());
    if (S != N) {
      const std::uint64_t rows = level.boxes;
      pad_kernel<D, T, P, false><<<gpu::blocks_for(rows * S, kThreads), kThreads>>>(table, M, level.boxes, scratch + entries);
    }
  } else {
    const std::uint64_t rows = std::uint64_t(kOffsets<D>) + (S == N ? 0 : level.boxes);
    pad_kernel<D, T, P, true><<<gpu::blocks_for(rows * S, kThreads), kThreads>>>(table, M, level.boxes, scratch);
  }
  NF_CUDA(cudaGetLastError());
  const T* padded_M = S == N ? M : scratch + entries;
  const std::uint64_t threads = std::uint64_t(32) * (1u << D) * gpu::div_up(parents.boxes, 32u);
  const std::uint32_t blocks = std::uint32_t(gpu::div_up(std::uint32_t(threads), kThreads));
  // Levels with fewer threads than the GPU holds split each list (up to 8 shares).
  const std::uint64_t holds = std::uint64_t(resident) * std::uint64_t(kThreads) * std::uint64_t(gpu::sm_count());
  const std::uint32_t splits = std::uint32_t(std::clamp<std::uint64_t>((holds + threads - 1) / threads, 1, 8));
  thread_kernel<D, T, P><<<dim3(blocks, splits), kThreads>>>(level, parents, list, scratch, padded_M, L);
  NF_CUDA(cudaGetLastError());
}

}  // namespace

template <int D, class T>
void m2l_thread(int p, const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list,
                const T* derivatives, const T* M, T* L, T* scratch) {
  if (level.boxes == 0 || list.links == 0 || parents.boxes == 0) return;
  dispatch_fixed_order(
      p, [&](auto order) { launch<D, T, decltype(order)::value>(level, parents, list, derivatives, M, L, scratch); },
      std::make_integer_sequence<int, kWideMaxOrder<D, T>>{});
}

template <int D, class T>
std::size_t m2l_thread_scratch(int p, std::uint32_t boxes) {
  const int n = terms<D>(p), stride = thread_row_stride(n, int(sizeof(T)));
  return table_entries<D, T>(p) + (stride == n ? 0 : std::size_t(stride) * boxes);
}

template void m2l_thread<2, float>(int, const DeviceLevel&, const DeviceLevel&, const DeviceList&,
                                     const float*, const float*, float*, float*);
template std::size_t m2l_thread_scratch<2, float>(int, std::uint32_t);
template void m2l_thread<2, double>(int, const DeviceLevel&, const DeviceLevel&, const DeviceList&,
                                     const double*, const double*, double*, double*);
template std::size_t m2l_thread_scratch<2, double>(int, std::uint32_t);
template void m2l_thread<3, float>(int, const DeviceLevel&, const DeviceLevel&, const DeviceList&,
                                     const float*, const float*, float*, float*);
template std::size_t m2l_thread_scratch<3, float>(int, std::uint32_t);
template void m2l_thread<3, double>(int, const DeviceLevel&, const DeviceLevel&, const DeviceList&,
                                     const double*, const double*, double*, double*);
template std::size_t m2l_thread_scratch<3, double>(int, std::uint32_t);

}  // namespace nf::farfield
