// M2L of sibling groups on the tensor cores (farfield/m2l_tensor_gpu.h, docs/design.md §16 "M2L on
// tensor cores"): the kernel and its device helpers. Included by farfield/m2l_tensor_gpu.cu only.
#pragma once

#include <cstdint>

#include <cuda_pipeline.h>

#include "farfield/m2l_group_kernel.cuh"

namespace nf::farfield {
namespace {

constexpr int kTensorTargets = 32;  // slots a block: 4 target tiles of 8
constexpr int kTensorUnits = 4;     // (row tile, k-steps) units a warp: 16 accumulators each
constexpr int kTensorStages = 4;    // operand buffers at most

// x rounded to TF32 (10 explicit mantissa bits, round to nearest), as its bit pattern.
__device__ __forceinline__ std::uint32_t to_tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
// x = hi + lo + (a remainder of about 2^-22 x): the two TF32 parts of a float.
__device__ __forceinline__ void split_tf32(float x, std::uint32_t& hi, std::uint32_t& lo) {
  hi = to_tf32(x);
  lo = to_tf32(x - __uint_as_float(hi));
}
// c += a b on the tensor cores: a 16 x 8 TF32 tile (a0: row g, column t; a1: row g + 8, column t;
// a2, a3: the same rows at column t + 4, for lane 4 g + t), b an 8 x 8 one (b0: row t, column g;
// b1: row t + 4), c 16 x 8 in float (c0, c1: row g, columns 2 t, 2 t + 1; c2, c3: row g + 8).
__device__ __forceinline__ void mma_tf32(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Where moment n of slot t lives in a stage: row n of 32 slots, the slot XOR-ed with (n mod 4) * 8
// + (n / 4) mod 8, so that neither the copies (a warp writes 32 consecutive n of one slot) nor the
// fragment loads (rows n0 + 0..3, slots t0 + 0..7) meet two lanes in one bank.
__device__ __forceinline__ int moment_at(int n, int t) { return n * 32 + (t ^ (((n & 3) << 3) | ((n >> 2) & 7))); }

// One block: the sibling group of find_group (m2l_group_kernel.cuh), 32 slots. For each active
// offset R, L_k += sum_n A_kn M_n with A_kn = (-1)^|n| D_{n+k}(R) is a product of A (rows k,
// columns n) with the block's gathered moments (rows n, 32 slots): the rows cut into tiles of 16,
// the columns into k-steps of 8, each (tile, k-step) against the 4 tiles of 8 slots one
// m16n8k8 product each. A is never stored: lane l of a (tile, k-step) reads its four entries from
// the offset's signed derivatives in shared memory (dz: D_i at i, -D_i at terms + i, 0 at 2 terms:
// entries past the order; D_i of degree above the offset's order q zeroed) through `map` (per tile,
// k-step and lane, four 16-bit indices). Float products on TF32 tensor cores in three parts (A_hi
// B_hi + A_hi B_lo + A_lo B_hi, each part split on the fly; the dropped A_lo B_lo is about 2^-22 of a
// product), accumulated in float: the sums keep float's precision.
// A warp owns up to kTensorUnits units (a tile over some of its k-steps, dealt out: plan, as m2l_group_plan.h
// packs them, the tile's first k-step in `map` with its first row's degree) and keeps their
// accumulators in registers over every offset; at the end the units meet in shared memory and each
// target's locals are added to L once. Shared memory: Stages x (the moments [rows][32], rows =
// terms rounded up to 8, zero past terms; then dz_stride signed derivatives), then find_group's
// arrays. With Stages > 1 the operands of the next Stages - 1 offsets are copied while this one is
// summed (one barrier an offset). An offset of
// order q below p copies the moments of degree <= q and sums each tile's k-steps up to those of
// the columns |n| <= q - its first row's degree.
template <int D, int Stages>
__global__ void __launch_bounds__(512, 1) tensor_kernel(DeviceLevel level, DeviceLevel parents, DeviceList list,
                                                         int terms, int rows, int dz_stride,
                                                         const int* __restrict__ plan, const uint2* __restrict__ map,
                                                         const float* __restrict__ dz, OffsetOrders orders,
                                                         const float* __restrict__ M, float* __restrict__ L) {
  constexpr int TB = kTensorTargets, U = kTensorUnits, kCand = kCandidates<D>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int stage_size = rows * TB + dz_stride;  // a multiple of 4: 16-byte aligned stages
  float* stages = reinterpret_cast<float*>(smem);
  std::uint32_t* target = reinterpret_cast<std::uint32_t*>(stages + Stages * stage_size);
  std::uint32_t* source = target + TB;
  int* active = reinterpret_cast<int*>(source + kCand * TB);
  int* active_order = active + kCand;
  __shared__ int active_count;
  __shared__ int term_count[kMaxOrder + 1];
  for (int d = threadIdx.x; d <= kMaxOrder; d += blockDim.x) term_count[d] = nf::farfield::terms<D>(d);
  const int tid = threadIdx.x, threads = blockDim.x, warp = tid / 32, lane = tid % 32, warps = threads / 32;
  std::uint32_t cc[D];
  int share_begin = 0, share_end = 0;
  if (!find_group<D, TB>(level, parents, list, orders, target, source, active, active_order, active_count, cc,
                         share_begin, share_end))
    return;
  // Every moment row zero first: an offset of lower order copies fewer rows, and a k-step may read
  // up to 7 rows past them (their entries of A are zero, and zero times a stale finite moment is zero).
  for (int st = 0; st < Stages; ++st)
    for (int i = tid; i < rows * TB; i += threads) stages[st * stage_size + i] = 0.0f;
  __syncthreads();

  const int full_order = orders[4];  // p: the nearest offsets' order
  // Candidate active[i]'s signed derivatives and its sources' moments into stage st, one group.
  auto enqueue = [&](int i, int st) {
    float* moments = stages + st * stage_size;
    const int u = active[i];
    int o = 0;  // offset index sum_a (R0_a + 3) 7^a, R0_a + 3 = u's digit a + cc_a
    for (int a = 0, v = u, scale = 1; a < D; ++a, v /= 6, scale *= 7) o += (v % 6 + int(cc[a])) * scale;
    const float* from = dz + std::size_t(o) * dz_stride;
    const std::uint32_t at = shared_address(moments + rows * TB);
    for (int e = tid * 4; e < dz_stride; e += threads * 4) copy_async<16>(at + e * 4, from + e, 16);
    const int count = term_count[active_order[i]];
    for (int s = warp; s < TB; s += warps) {
      const std::uint32_t src = source[u * TB + s];
      const float* m = M + std::size_t(src == kNoBox ? 0 : src) * terms;
      const std::uint32_t bytes = src == kNoBox ? 0 : 4;
      for (int n = lane; n < count; n += 32) copy_async<4>(shared_address(moments + moment_at(n, s)), m + n, bytes);
    }
    __pipeline_commit();
  };

  // A unit (plan, read where used: registers go to the accumulators): tile | k-step begin << 8 |
  // end << 20, then its map start | (stride - 1) << 20 | its first row's degree << 26 (its k-steps
  // begin, begin + stride, ... below end: m2l_group_plan.h).
  const int2* units = reinterpret_cast<const int2*>(plan) + warp * U;
  float acc[U][4][4];
#pragma unroll
  for (int v = 0; v < U; ++v)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[v][j][e] = 0.0f;
  const int g = lane >> 2, t4 = lane & 3;

  // A ring of Stages operand buffers: offset i's operands in buffer (i - share_begin) % Stages, each
  // copy issued Stages - 1 offsets ahead, one commit group an offset (empty past the share's end).
  if constexpr (Stages > 1)
    for (int k = 0; k < Stages - 1; ++k) {
      if (share_begin + k < share_end) enqueue(share_begin + k, k);
      else __pipeline_commit();
    }
  for (int i = share_begin; i < share_end; ++i) {
    const int rel = i - share_begin, st = Stages == 1 ? 0 : rel % Stages;
    if constexpr (Stages == 1) {
      __syncthreads();  // the previous offset's sums are done with the buffer
      enqueue(i, 0);
      __pipeline_wait_prior(0);
    } else {
      __pipeline_wait_prior(Stages - 2);  // offset i's group (groups up to i + Stages - 2 issued)
    }
    __syncthreads();  // every thread's copies of offset i have landed; offset i - 1's sums are done
    if constexpr (Stages > 1) {
      // into the buffer offset i - 1 was summed from
      if (i + Stages - 1 < share_end) enqueue(i + Stages - 1, (rel + Stages - 1) % Stages);
      else __pipeline_commit();
    }
    const float* Ms = stages + st * stage_size;
    const float* Ds = Ms + rows * TB;
    const int order = active_order[i];
#pragma unroll
    for (int v = 0; v < U; ++v) {
      const int2 un = __ldg(units + v);
      const int s0 = (un.x >> 8) & 0xfff;
      int s1 = (un.x >> 20) & 0xfff;
      if (order != full_order) {  // the k-steps of the columns |n| <= order - the tile's first degree
        const int left = order - (un.y >> 26);
        s1 = min(s1, left < 0 ? 0 : (term_count[left] + 7) >> 3);
      }
      const int stride = ((un.y >> 20) & 0x3f) + 1;  // the unit's k-steps s0, s0 + stride, ...
      const uint2* mp = map + (std::size_t((un.y & 0xfffff) + s0) << 5) + lane;
      // This offset's sums apart, added to the unit's accumulators once (the tensor cores' sums
      // round less well than a float add: kept to one offset's k-steps).
      float part[4][4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) part[j][e] = 0.0f;
      for (int s = s0; s < s1; s += stride, mp += 32 * stride) {
        const uint2 ix = __ldg(mp);
        std::uint32_t ah[4], al[4];
        split_tf32(Ds[ix.x & 0xffff], ah[0], al[0]);
        split_tf32(Ds[ix.x >> 16], ah[1], al[1]);
        split_tf32(Ds[ix.y & 0xffff], ah[2], al[2]);
        split_tf32(Ds[ix.y >> 16], ah[3], al[3]);
        const float* b0 = Ms + (8 * s + t4) * TB;  // rows n = 8 s + t4 and n + 4
        const float* b1 = b0 + 4 * TB;
        const int h0 = (t4 << 3) | ((2 * s) & 7), h1 = (t4 << 3) | ((2 * s + 1) & 7);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          std::uint32_t bh0, bl0, bh1, bl1;
          split_tf32(b0[(8 * j + g) ^ h0], bh0, bl0);
          split_tf32(b1[(8 * j + g) ^ h1], bh1, bl1);
          mma_tf32(part[j], al, bh0, bh1);
          mma_tf32(part[j], ah, bl0, bl1);
          mma_tf32(part[j], ah, bh0, bh1);
        }
      }
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[v][j][e] += part[j][e];
    }
  }
  __pipeline_wait_prior(0);
  __syncthreads();  // the sums are done with every buffer

  constexpr int LS = TB + 1;  // the locals [row][slot], in stage 0
  float* Lt = stages;
  for (int i = tid; i < terms * LS; i += threads) Lt[i] = 0.0f;  // rows past the terms are never read
  __syncthreads();
#pragma unroll
  for (int v = 0; v < U; ++v) {
    const int2 un = __ldg(units + v);
    if (((un.x >> 8) & 0xfff) == ((un.x >> 20) & 0xfff)) continue;  // an empty unit
    const int row = 16 * (un.x & 0xff) + g;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int t = 8 * j + 2 * t4;
      if (row < terms) {
        atomicAdd(Lt + row * LS + t, acc[v][j][0]);
        atomicAdd(Lt + row * LS + t + 1, acc[v][j][1]);
      }
      if (row + 8 < terms) {
        atomicAdd(Lt + (row + 8) * LS + t, acc[v][j][2]);
        atomicAdd(Lt + (row + 8) * LS + t + 1, acc[v][j][3]);
      }
    }
  }
  __syncthreads();
  add_locals<float, TB>(target, Lt, LS, terms, L);
}

}  // namespace
}  // namespace nf::farfield
