#pragma once
// Helpers shared by the box-per-block kernels: which box a block owns, block sizing, and the
// cooperative copy of a run of bodies into shared memory.
#include <algorithm>
#include <cstdint>

#include "core/body.h"
#include "core/launch.cuh"
#include "nearfield/nearfield_gpu.h"

namespace nf::box_tiles {

struct BoxBlockPolicy {
  // One thread per particle of the box ("the first n threads of the block", as in the paper),
  // rounded up to whole warps; boxes beyond max_threads are processed in chunks. 512 keeps three
  // or more blocks resident per SM at the register counts of these kernels (30-32 registers in
  // float). Measured on an H100, 2D float, level 7: bpb with 512-thread blocks at P = 512 runs at
  // 2.37e12 interactions/s, 98% of allpairs-tiled's 2D rate.
  static constexpr std::uint32_t max_threads = 512;
};

//! Threads per block for boxes of at most `max_box_count` particles.
inline std::uint32_t block_threads(std::uint32_t max_box_count) {
  const std::uint32_t t = std::min(std::max<std::uint32_t>(max_box_count, 1), BoxBlockPolicy::max_threads);
  return (t + 31) / 32 * 32;
}

//! The particles [begin, end) of one box.
struct BoxRange {
  std::uint32_t begin, end;
  __device__ std::uint32_t size() const { return end - begin; }
};

__device__ __forceinline__ BoxRange box_range(const std::uint32_t* box_start, std::uint32_t box) {
  return {box_start[box], box_start[box + 1]};
}

//! Threads [0, count) copy bodies[first .. first + count) into tile[0 .. count).
template <class T>
__device__ __forceinline__ void load_tile(const Body<T>* __restrict__ bodies, std::uint32_t first, std::uint32_t count,
                                          Body<T>* tile) {
  if (threadIdx.x < count) tile[threadIdx.x] = bodies[first + threadIdx.x];
}

//! The box-per-block staging loop: walks bodies[r.begin, r.end) in tiles of blockDim.x, for each
//! tile: barrier (the previous tile is no longer read), copy into `tile` and call on_load(m)
//! (kernels that clear per-tile state do it there), barrier, then visit(s0, m) with the tile's
//! first sorted index and size. Every thread of the block calls it.
template <class T, class OnLoad, class Visit>
__device__ __forceinline__ void for_each_staged_tile(const Body<T>* __restrict__ bodies, BoxRange r, Body<T>* tile,
                                                     OnLoad&& on_load, Visit&& visit) {
  for (std::uint32_t s0 = r.begin; s0 < r.end; s0 += blockDim.x) {
    const std::uint32_t m = min(blockDim.x, r.end - s0);
    __syncthreads();
    load_tile(bodies, s0, m, tile);
    on_load(m);
    __syncthreads();
    visit(s0, m);
  }
}

//! No per-tile state to clear.
struct NoState {
  __device__ void operator()(std::uint32_t) const {}
};

//! Adds this thread's evaluated-interaction count to the global counter (counting mode only).
__device__ __forceinline__ void add_count(unsigned long long* counter, unsigned long long count) {
  if (count) atomicAdd(counter, count);
}

}  // namespace nf::box_tiles
