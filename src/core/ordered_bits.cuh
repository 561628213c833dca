#pragma once
//! Doubles as order-preserving 64-bit integers, so that integer atomicMin/atomicMax reduce them
//! exactly, and the block-wide reduction of position bounds (PositionBounds) built on them.
#include "core/device_arrays.h"

namespace nf::gpu {

__device__ inline unsigned long long ordered_bits(double v) {
  const unsigned long long b = static_cast<unsigned long long>(__double_as_longlong(v));
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
__device__ inline double from_ordered_bits(unsigned long long b) {
  b = (b & 0x8000000000000000ull) ? (b & ~0x8000000000000000ull) : ~b;
  return __longlong_as_double(static_cast<long long>(b));
}

__device__ inline void reset_bounds(PositionBounds* b) {
  for (int a = 0; a < 3; ++a) {
    b->lo[a] = ~0ull;
    b->hi[a] = 0ull;
  }
}

//! A thread's running bounds of D axes (start: empty).
template <int D>
struct BoundsAccumulator {
  unsigned long long lo[D], hi[D];
  __device__ BoundsAccumulator() {
    for (int a = 0; a < D; ++a) lo[a] = ~0ull, hi[a] = 0ull;
  }
  __device__ void add(int a, double v) {
    const unsigned long long o = ordered_bits(v);
    lo[a] = min(lo[a], o);
    hi[a] = max(hi[a], o);
  }
  //! Folds the block's bounds into *b with one pair of atomics per block and axis (atomics on one
  //! address serialise: a pair per warp cost a 1M-particle drift 0.09 ms). Every thread of the
  //! block calls it; blockDim.x is a multiple of 32, at most 1024.
  __device__ void add_block_to(PositionBounds* b) {
    __shared__ unsigned long long warp_lo[32][D], warp_hi[32][D];
    warp_reduce();
    const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if ((threadIdx.x & 31) == 0)
      for (int a = 0; a < D; ++a) warp_lo[warp][a] = lo[a], warp_hi[warp][a] = hi[a];
    __syncthreads();
    if (threadIdx.x >= 32) return;
    for (int a = 0; a < D; ++a) {
      lo[a] = threadIdx.x < warps ? warp_lo[threadIdx.x][a] : ~0ull;
      hi[a] = threadIdx.x < warps ? warp_hi[threadIdx.x][a] : 0ull;
    }
    warp_reduce();
    if (threadIdx.x == 0)
      for (int a = 0; a < D; ++a) {
        atomicMin(&b->lo[a], lo[a]);
        atomicMax(&b->hi[a], hi[a]);
      }
  }

 private:
  __device__ void warp_reduce() {
    for (int a = 0; a < D; ++a)
      for (int off = 16; off > 0; off >>= 1) {
        lo[a] = min(lo[a], __shfl_xor_sync(0xffffffffu, lo[a], off));
        hi[a] = max(hi[a], __shfl_xor_sync(0xffffffffu, hi[a], off));
      }
  }
};

}  // namespace nf::gpu
