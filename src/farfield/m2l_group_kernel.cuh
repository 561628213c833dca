// The sibling-group M2L kernel (farfield/m2l_gpu.h, docs/design.md §16 "M2L on the GPU"), its
// constants and device helpers; farfield/m2l_gpu.cu plans and launches it. Included by that file only.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_pipeline.h>

#include "farfield/lists_gpu.h"
#include "farfield/multi_index.h"
#include "farfield/offset_order.h"
#include "farfield/vector4.cuh"
#include "tree/levels_gpu.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

constexpr std::uint32_t kNoBox = 0xffffffffu;  // no child c of a parent, no source at an offset

// The columns a unit's loop takes at a time (unrolled; a plan deals a quad's columns out to its
// units in chunks of this many: m2l_group_plan.h, plan_pieces).
constexpr int kChunk = 4;

// Candidate offsets of one child position: 6 per axis.
template <int D>
constexpr int kCandidates = D == 3 ? 216 : 36;

// Units a warp owns: their accumulators (R rows x TL targets each) live in registers, the same
// count at R = 4 and 8 (half the units at 8).
template <int TL, int R = 4>
constexpr int kUnits = (TL == 2 ? 6 : 10) * 4 / R;

template <class T, int TL>
__device__ __forceinline__ void load_targets(const T* p, T (&m)[TL]) {
  if constexpr (TL == 1) {
    m[0] = p[0];
  } else if constexpr (sizeof(T) == 4) {
    const float2 v = *reinterpret_cast<const float2*>(p);
    m[0] = v.x, m[1] = v.y;
  } else {
    const double2 v = *reinterpret_cast<const double2*>(p);
    m[0] = v.x, m[1] = v.y;
  }
}

// Copies of 4, 8 or 16 bytes from global to shared memory that do not wait (cp.async): the next
// offset's operands arrive while this offset is computed. `to` is a shared-memory address
// (__cvta_generic_to_shared); `from_bytes` of the Bytes are read, the rest filled with zeros (0: a
// missing source's moments), a register operand, so that one instruction serves both cases.
template <int Bytes>
__device__ __forceinline__ void copy_async(std::uint32_t to, const void* from, std::uint32_t from_bytes) {
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(from), "r"(from_bytes) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(to), "l"(from), "n"(Bytes), "r"(from_bytes)
                 : "memory");
}
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Packed moments (docs/design.md §16 "Moments of 16 bits"): a box's `words` 4-byte words, the terms
// n < F as floats, then the terms from F in pairs of bfloat16, term F + 2j in word F + j's low half
// and F + 2j + 1 in its high half (rounded to nearest, even; a missing last term is 0). Word w of
// box b from the level's float moments M (terms a box); a thread a word.
__global__ void pack_moments_kernel(std::size_t count, int terms, int F, int words, const float* __restrict__ M,
                                    std::uint32_t* __restrict__ out) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t b = i / std::size_t(words);
    const int w = int(i - b * std::size_t(words));
    const float* m = M + b * std::size_t(terms);
    if (w < F) {
      out[i] = __float_as_uint(m[w]);
    } else {
      const int n = F + 2 * (w - F);
      const std::uint32_t lo = __bfloat16_as_ushort(__float2bfloat16_rn(m[n]));
      const std::uint32_t hi = n + 1 < terms ? __bfloat16_as_ushort(__float2bfloat16_rn(m[n + 1])) : 0u;
      out[i] = lo | hi << 16;
    }
  }
}
// The two terms of a packed word as floats (bfloat16 is a float's upper half).
__device__ __forceinline__ float packed_low(std::uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float packed_high(std::uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

// The block's sibling group (shared by group_kernel and the tensor-core kernel,
// m2l_tensor_kernel.cuh): child c = blockIdx.x % 2^D of the TB parents from (blockIdx.x / 2^D) * TB
// (on an adaptive level: of the split parents listed from there, DeviceLevel::split). Finds the slots'
// targets (target[TB]), per (candidate, slot) the source's id (source[kCandidates * TB]), the
// candidates that have a source and their orders (active, active_order, active_count; all shared),
// the child's position cc and this block's share [share_begin, share_end) of the active candidates
// (blockIdx.y of gridDim.y). False, for the whole block, where it has no parents.
template <int D, int TB>
__device__ __forceinline__ bool find_group(const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list,
                                           const OffsetOrders& orders, std::uint32_t* target, std::uint32_t* source,
                                           int* active, int* active_order, int& active_count, std::uint32_t (&cc)[D],
                                           int& share_begin, int& share_end) {
  constexpr int C = 1 << D, kCand = kCandidates<D>;
  const int tid = threadIdx.x, threads = blockDim.x, warp = tid / 32, lane = tid % 32, warps = threads / 32;
  const std::uint32_t c = blockIdx.x % C, first_parent = (blockIdx.x / C) * TB;
  // The parents whose children are targets: every box of a uniform level, the split ones of an
  // adaptive level (their count known on the device only: the grid covers every box).
  const std::uint32_t parent_count = parents.split ? *parents.split_count : parents.boxes;
  if (first_parent >= parent_count) return false;  // the whole block
  morton_coords<D>(c, cc);

  for (int s = tid; s < TB; s += threads) {
    std::uint32_t t = kNoBox;
    const std::uint32_t g = first_parent + s, parent = parents.split && g < parent_count ? parents.split[g] : g;
    if (g < parent_count)
      for (std::uint32_t i = parents.child[parent]; i < parents.child[parent + 1]; ++i)
        if ((level.key[i] & (C - 1)) == c) {
          t = i;
          break;
        }
    target[s] = t;
  }
  for (int i = tid; i < kCand * TB; i += threads) source[i] = kNoBox;
  __syncthreads();
  for (int s = warp; s < TB; s += warps) {
    const std::uint32_t t = target[s];
    if (t == kNoBox) continue;
    std::uint32_t ct[D];
    morton_coords<D>(level.key[t], ct);
    const std::uint32_t begin = list.offset[t], end = list.offset[t + 1];
    for (std::uint32_t j = begin + lane; j < end; j += 32) {
      const std::uint32_t id = list.ids[j];
      std::uint32_t cs[D];
      morton_coords<D>(level.key[id], cs);
      int u = 0;  // R0 = ct - cs lies in cc - 3 .. cc + 2: digit R0 - cc + 3 in 0 .. 5
      for (int a = D - 1; a >= 0; --a) u = u * 6 + (int(ct[a]) - int(cs[a]) - int(cc[a]) + 3);
      source[u * TB + s] = id;
    }
  }
  __syncthreads();
  if (warp == 0) {  // the candidates with a source, in order, this block's share of them
    int count = 0;
    for (int base = 0; base < kCand; base += 32) {
      const int u = base + lane;
      bool any = false;
      if (u < kCand)
        for (int s = 0; s < TB && !any; ++s) any = source[u * TB + s] != kNoBox;
      const unsigned mask = __ballot_sync(0xffffffffu, any);
      if (any) {
        int R[D];  // the offset R0 = u's digits + cc - 3, and its order
        for (int a = 0, v = u; a < D; ++a, v /= 6) R[a] = v % 6 + int(cc[a]) - 3;
        const int at = count + __popc(mask & ((1u << lane) - 1));
        active[at] = u;
        active_order[at] = orders.at<D>(R);
      }
      count += __popc(mask);
    }
    if (lane == 0) active_count = count;
  }
  __syncthreads();
  share_begin = int(blockIdx.y) * active_count / int(gridDim.y);
  share_end = int(blockIdx.y + 1) * active_count / int(gridDim.y);
  return true;
}

// Adds each slot's locals, Lt[n * stride + slot] for n < terms, to its target's in L: a warp a
// slot, atomically where a group's offsets were shared among blocks (gridDim.y > 1).
template <class T, int TB>
__device__ __forceinline__ void add_locals(const std::uint32_t* target, const T* Lt, int stride, int terms, T* L) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int s = warp; s < TB; s += warps) {
    const std::uint32_t t = target[s];
    if (t == kNoBox) continue;
    T* out = L + std::size_t(t) * terms;
    if (gridDim.y == 1) {
      for (int n = lane; n < terms; n += 32) out[n] += Lt[n * stride + s];
    } else {
      for (int n = lane; n < terms; n += 32) atomicAdd(out + n, Lt[n * stride + s]);
    }
  }
}

// One block: child c = blockIdx.x % 2^D of the TB parents from (blockIdx.x / 2^D) * TB (on an
// adaptive level: of the split parents listed from there, DeviceLevel::split), and the
// share blockIdx.y of gridDim.y of their offsets (more than one share only on levels too small to
// fill the GPU; the shares then add into L atomically). Slot s of the block is parent s's child c;
// lane l holds slots l * TL .. l * TL + TL - 1. Shared memory: per stage the moments of one offset's
// sources [term][slot] (stride TB + 2; the stages' room is reused for the locals at the end, and
// holds at least their terms x (TB + 2) values: packed moments with a slice's table can need more) and the
// offset's operator table; the slots' target ids; per (candidate, slot) the source's id (found
// once); the list of candidates that have a source. With 2 stages the next offset's operands are
// copied while the current one is computed. An offset R of order q = orders.at(R) below p
// (farfield/offset_order.h) copies the moments of degree <= q and the table's columns whose
// chunk_order (the quad's first row degree plus the column's) is <= q, and each unit sums the
// columns n < terms(q - its quad's first row degree) (the table holds zeros where |n| + |k| > q).
// Each offset's table is table_stride entries; the block copies its slice of table_size entries
// from table_begin (the whole table, or the rows of one slice where the whole does not fit in
// shared memory: M2LOperators runs a launch per slice, each adding its rows' locals into L).
// Packed (float only): M holds `words` values a box, packed by pack_moments_kernel (F floats, then
// bfloat16 pairs; F a multiple of kChunk, and the plan's chunks start at multiples of kChunk), and
// the moments' shared-memory rows are words, not terms; else M holds the terms as they are (words and
// F unused: these instances' code is that of the kernel before packing).
template <int D, class T, int TL, int Stages, int R = 4, bool Packed = false>
__global__ void __launch_bounds__(512) group_kernel(DeviceLevel level, DeviceLevel parents, DeviceList list, int terms,
                                                     int words, int F, int table_stride, int table_begin, int table_size,
                                                     int first_quad,
                                                     const int* __restrict__ plan,
                                                     const T* __restrict__ ops, OffsetOrders orders,
                                                     const unsigned char* __restrict__ chunk_order,
                                                     const T* __restrict__ M, T* __restrict__ L, int probe) {
  constexpr int TB = 32 * TL, S = TB + 2, U = kUnits<TL, R>, kCand = kCandidates<D>;
  // probe (NEARFIELD_M2L_PROBE, comparisons only; the result is then wrong): 1 skips the sums
  // (copies and barriers only), 2 the copies of the operands (sums of whatever shared memory holds).
  const bool copy = probe != 2, sums = probe != 1;
  static_assert(R == 4 || R == 8, "a unit's rows: a quad or two");
  extern __shared__ __align__(16) unsigned char smem[];
  static_assert(!Packed || sizeof(T) == 4, "packed moments: float only");
  const int stride_m = Packed ? words : terms;  // a source's values in M, its moments' rows a stage
  const int moments_size = (stride_m * S + 3) & ~3;  // a multiple of 4: 16-byte aligned stages
  const int stage_size = moments_size + table_size;
  T* stages = reinterpret_cast<T*>(smem);
  // Stages 1 and 2: stage st holds moments then table; 3: moments 0, moments 1, then one table. The
  // room holds at least the slots' locals (summed there at the end): packed moments with a slice's
  // small table can take less (m2l_group_plan.h, group_shared_bytes).
  const int staged = Stages == 3 ? 2 * moments_size + table_size : Stages * stage_size;
  const int operands = Packed ? max(staged, (terms * S + 3) & ~3) : staged;
  std::uint32_t* target = reinterpret_cast<std::uint32_t*>(stages + operands);
  std::uint32_t* source = target + TB;
  int* active = reinterpret_cast<int*>(source + kCand * TB);
  int* active_order = active + kCand;  // the order of active[i]'s offset, found with the list
  __shared__ int active_count;
  __shared__ int term_count[kMaxOrder + 1];  // terms<D>(d): the coefficients of degree <= d
  for (int d = threadIdx.x; d <= kMaxOrder; d += blockDim.x) term_count[d] = nf::farfield::terms<D>(d);
  const int tid = threadIdx.x, threads = blockDim.x, warp = tid / 32, lane = tid % 32, warps = threads / 32;
  std::uint32_t cc[D];
  int share_begin = 0, share_end = 0;
  if (!find_group<D, TB>(level, parents, list, orders, target, source, active, active_order, active_count, cc,
                         share_begin, share_end))
    return;

  auto order_of = [&](int i) { return active_order[i]; };
  const int full_order = orders[4];  // p: the nearest offsets' order
  // Where stage st's moments and table live.
  auto moments_at = [&](int st) { return Stages == 3 ? stages + st * moments_size : stages + st * stage_size; };
  auto table_at = [&](int st) {
    return Stages == 3 ? stages + 2 * moments_size : stages + st * stage_size + moments_size;
  };
  // Candidate active[i]'s operator table into `to`, and its sources' moments into `to` (not committed).
  auto enqueue_table = [&](int i, T* to) {
    const int u = active[i];
    int o = 0;  // offset index sum_a (R0_a + 3) 7^a, R0_a + 3 = u's digit a + cc_a
    for (int a = 0, v = u, scale = 1; a < D; ++a, v /= 6, scale *= 7) o += (v % 6 + int(cc[a])) * scale;
    const T* table = ops + std::size_t(o) * table_stride + table_begin;
    const int q = order_of(i);
    constexpr int kPer = 16 / sizeof(T);  // table_size is a multiple of 4, every table 16-byte aligned
    const std::uint32_t at = shared_address(to);
    if (q == full_order) {
      for (int e = tid * kPer; e < table_size; e += threads * kPer) copy_async<16>(at + e * sizeof(T), table + e, 16);
    } else {
      for (int e = tid * kPer; e < table_size; e += threads * kPer)
        if (chunk_order[(table_begin + e) / 4] <= q) copy_async<16>(at + e * sizeof(T), table + e, 16);
    }
  };
  // A warp per slot: one source's moments, coalesced; a missing source's are zeros. The addresses
  // advance by increments, one copy instruction for both cases (docs/design.md §16: 5% fewer issued
  // instructions, M2L 3% faster at 3D p = 10).
  auto enqueue_moments = [&](int i, T* to) {
    const int u = active[i], t = term_count[order_of(i)];
    const int count = Packed && t > F ? F + (t - F + 1) / 2 : t;  // the rows (words) that hold them
    for (int s = warp; s < TB; s += warps) {
      const std::uint32_t src = source[u * TB + s];
      const T* m = M + std::size_t(src == kNoBox ? 0 : src) * stride_m + lane;
      const std::uint32_t bytes = src == kNoBox ? 0 : sizeof(T);
      std::uint32_t at = shared_address(to + lane * S + s);
#pragma unroll 4
      for (int n = lane; n < count; n += 32, m += 32, at += 32 * S * sizeof(T)) copy_async<sizeof(T)>(at, m, bytes);
    }
  };
  // Both operands of candidate active[i] into stage st, committed as one group.
  auto enqueue = [&](int i, int st) {
    if (copy) {
      enqueue_table(i, table_at(st));
      enqueue_moments(i, moments_at(st));
    }
    __pipeline_commit();
  };

  int unit[U], first[U];  // first: the quad's table offset | (stride - 1) << 20 | its first row's degree << 26
#pragma unroll
  for (int v = 0; v < U; ++v) unit[v] = plan[2 * (warp * U + v)], first[v] = plan[2 * (warp * U + v) + 1];
  T acc[U][R][TL];
#pragma unroll
  for (int v = 0; v < U; ++v)
#pragma unroll
    for (int j = 0; j < R; ++j)
#pragma unroll
      for (int i = 0; i < TL; ++i) acc[v][j][i] = T(0);

  if (share_begin < share_end) enqueue(share_begin, 0);
  for (int i = share_begin; i < share_end; ++i) {
    const int st = Stages >= 2 ? (i - share_begin) & 1 : 0;
    if (Stages >= 2 && i + 1 < share_end) {
      // Its stage (moments: Stages 3) was last read two offsets ago, before the barrier below.
      if (Stages == 2) {
        enqueue(i + 1, st ^ 1);
      } else {
        if (copy) enqueue_moments(i + 1, moments_at(st ^ 1));
        __pipeline_commit();
      }
      __pipeline_wait_prior(1);  // all but that group: offset i's operands
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();  // every thread's copies into stage st have landed
    const T* Ms = moments_at(st);
    const T* Ts = table_at(st);
    const int order = order_of(i);
    if (sums)
#pragma unroll
    for (int v = 0; v < U; ++v) {
      // below order p: the columns n with |n| <= the degree left for this quad's first row
      const int left = order - (first[v] >> 26);
      const int n1 = order == full_order ? (unit[v] >> 20) & 0xfff
                                         : min((unit[v] >> 20) & 0xfff, left < 0 ? 0 : term_count[left]);
      const T* quad = Ts + (first[v] & 0xfffff);
      auto load_table = [&](int n, T (&t)[R / 4][4]) {
#pragma unroll
        for (int h = 0; h < R / 4; ++h) load4(quad + R * n + 4 * h, t[h]);
      };
      // Word row w of the packed terms, TL slots' words.
      auto load_words = [&](int w, std::uint32_t (&x)[TL]) {
        const std::uint32_t* at = reinterpret_cast<const std::uint32_t*>(Ms + w * S + lane * TL);
        if constexpr (TL == 1) {
          x[0] = at[0];
        } else {
          const uint2 pair = *reinterpret_cast<const uint2*>(at);
          x[0] = pair.x, x[1] = pair.y;
        }
      };
      auto load = [&](int n, T (&t)[R / 4][4], T (&m)[TL]) {
        load_table(n, t);
        if constexpr (Packed) {
          if (n >= F) {  // a packed term: half of word F + (n - F) / 2
            std::uint32_t x[TL];
            load_words(F + ((n - F) >> 1), x);
#pragma unroll
            for (int i2 = 0; i2 < TL; ++i2) m[i2] = (n - F) & 1 ? packed_high(x[i2]) : packed_low(x[i2]);
            return;
          }
        }
        load_targets<T, TL>(Ms + n * S + lane * TL, m);
      };
      auto sum = [&](const T (&t)[R / 4][4], const T (&m)[TL]) {
#pragma unroll
        for (int j = 0; j < R; ++j)
#pragma unroll
          for (int i2 = 0; i2 < TL; ++i2) acc[v][j][i2] = fma(t[j / 4][j % 4], m[i2], acc[v][j][i2]);
      };
      const int n0 = (unit[v] >> 8) & 0xfff;
      // The unit's chunks of kChunk columns start at n0, n0 + stride, ... (stride kChunk: the columns
      // n0 .. n1 - 1); the last one may end early, at n1.
      if constexpr (sizeof(T) == 4) {
        const int stride = kChunk * (((first[v] >> 20) & 0x3f) + 1);
        // A whole chunk unrolled, its operands loaded before its sums (the loop's own instructions
        // had been a third of the issued ones; loading ahead of the sums made M2L 3% faster at 3D
        // p = 12: docs/design.md §16 "M2L on the GPU").
        int c = n0;
        // Packed: the chunks of float terms, then the packed ones (two loops; the first ends at a
        // multiple of kChunk, F or below, so the second starts at F or later).
        for (const int f1 = Packed ? min(n1, F) : n1; c + kChunk <= f1; c += stride) {
          T t[kChunk][R / 4][4], m[kChunk][TL];
#pragma unroll
          for (int j = 0; j < kChunk; ++j) {
            load_table(c + j, t[j]);
            load_targets<T, TL>(Ms + (c + j) * S + lane * TL, m[j]);
          }
#pragma unroll
          for (int j = 0; j < kChunk; ++j) sum(t[j], m[j]);
        }
        if constexpr (Packed)
          for (; c + kChunk <= n1; c += stride) {  // the chunk's 4 terms in two word rows
            T t[kChunk][R / 4][4], m[kChunk][TL];
#pragma unroll
            for (int h = 0; h < kChunk / 2; ++h) {
              std::uint32_t x[TL];
              load_words(F + ((c - F) >> 1) + h, x);
#pragma unroll
              for (int i2 = 0; i2 < TL; ++i2) m[2 * h][i2] = packed_low(x[i2]), m[2 * h + 1][i2] = packed_high(x[i2]);
            }
#pragma unroll
            for (int j = 0; j < kChunk; ++j) load_table(c + j, t[j]);
#pragma unroll
            for (int j = 0; j < kChunk; ++j) sum(t[j], m[j]);
          }
        for (; c < n1; ++c) {  // a chunk cut short by n1: the unit's last
          T t[R / 4][4], m[TL];
          load(c, t, m);
          sum(t, m);
        }
      } else {  // double: unrolling spills; its plans' pieces are contiguous (m2l_gpu.cu, kPlanChunk)
        for (int n = n0; n < n1; ++n) {
          T t[R / 4][4], m[TL];
          load(n, t, m);
          sum(t, m);
        }
      }
    }
    __syncthreads();  // stage st is free again
    if (Stages == 1 && i + 1 < share_end) enqueue(i + 1, 0);
    if (Stages == 3 && i + 1 < share_end) {  // the table buffer is free: the next offset's table
      if (copy) enqueue_table(i + 1, table_at(0));
      __pipeline_commit();
    }
  }

  T* Lt = stages;
  for (int i = tid; i < terms * S; i += threads) Lt[i] = T(0);
  __syncthreads();
#pragma unroll
  for (int v = 0; v < U; ++v) {
    const int q = (unit[v] & 0xff) + first_quad, n0 = (unit[v] >> 8) & 0xfff, n1 = (unit[v] >> 20) & 0xfff;
    if (n1 == n0) continue;
#pragma unroll
    for (int j = 0; j < R; ++j)
      if (R * q + j < terms)
#pragma unroll
        for (int i = 0; i < TL; ++i) atomicAdd(Lt + (R * q + j) * S + lane * TL + i, acc[v][j][i]);
  }
  __syncthreads();
  add_locals<T, TB>(target, Lt, S, terms, L);
}

}  // namespace
}  // namespace nf::farfield
