#pragma once
// Shared pieces of the Newton-3 warp kernels (n3_*.cu). A group of W lanes (a whole warp, W = 32,
// or a half or quarter of one for items of at most 16 or 8 targets) evaluates one PairItem: each
// lane keeps R targets in registers (lane l of the group holds targets a_begin + l + W r, r < R),
// so a group covers up to W R targets; the sources pass by in batches of W staged in the group's
// slice of shared memory. What differs between the kernels is how the reaction on a source is collected
// (a warp-shuffle reduction, or an accumulator that rotates from lane to lane) and how results
// reach global memory (atomics, or a conflict-free schedule with plain stores).
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "physics/interaction.h"
#include "core/launch.cuh"
#include "nearfield/box_tiles.cuh"
#include "nearfield/nearfield_gpu.h"
#include "nearfield/pair_items.cuh"

namespace nf::warp_pairs {

constexpr unsigned kFullMask = 0xFFFFFFFFu;

//! Targets per lane for boxes of at most `max_box` particles: the smallest power of two R with
//! 32 R >= max_box, at most r_max (bigger boxes are cut into chunks of 32 r_max).
inline int targets_per_lane(std::uint32_t max_box, int r_max) {
  int r = 1;
  while (r < r_max && 32u * r < max_box) r *= 2;
  return r;
}

//! dst += a with one vector atomic per particle where the hardware has it (float2 / float4 on
//! sm_90), else one scalar atomic per component. Addresses are distinct across a warp.
template <int D, class T>
__device__ __forceinline__ void add_atomic(Acc4<T>* dst, const Acc4<T>& a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (D == 2)
      atomicAdd(reinterpret_cast<float2*>(dst), make_float2(a.x, a.y));
    else
      atomicAdd(reinterpret_cast<float4*>(dst), make_float4(a.x, a.y, a.z, 0.f));
    return;
  }
#endif
  atomicAdd(&dst->x, a.x);
  atomicAdd(&dst->y, a.y);
  if constexpr (D == 3) atomicAdd(&dst->z, a.z);
}

//! dst += a with a plain load and store, for schedules where no other thread writes dst.
template <int D, class T>
__device__ __forceinline__ void add_plain_to(Acc4<T>* dst, const Acc4<T>& a) {
  Acc4<T> d = *dst;
  d.x += a.x;
  d.y += a.y;
  if constexpr (D == 3) d.z += a.z;
  *dst = d;
}

//! A lane's R targets (lane `lane` of a group of W): bodies and force accumulators in registers.
//! Slots past the end of the range hold the first target's position with mass 0: their reactions
//! on sources are exactly 0.
template <int D, class T, int R, unsigned W = 32>
struct LaneTargets {
  static constexpr int kTargets = R;
  Body<T> body[R];
  Acc4<T> acc[R];
  std::uint32_t first, end;

  __device__ __forceinline__ void load(const Body<T>* __restrict__ bodies, std::uint32_t begin, std::uint32_t stop,
                                       unsigned lane) {
    first = begin + lane;
    end = stop;
    const Body<T> pad = bodies[begin];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const std::uint32_t i = first + W * r;
      body[r] = i < end ? bodies[i] : Body<T>{pad.x, pad.y, pad.z, T(0)};
      acc[r] = Acc4<T>{0, 0, 0, 0};
    }
  }
  __device__ __forceinline__ bool valid(int r) const { return first + W * r < end; }
  //! acc[i] += the lane's accumulators, atomically (other items add into the same targets).
  __device__ __forceinline__ void add_to(Acc4<T>* __restrict__ out) const {
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (valid(r)) add_atomic<D>(out + first + W * r, acc[r]);
  }
  //! acc[i] += the lane's accumulators with plain loads and stores (no other warp may touch them).
  __device__ __forceinline__ void add_plain(Acc4<T>* __restrict__ out) const {
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (valid(r)) add_plain_to<D>(out + first + W * r, acc[r]);
  }
};

//! Stages sources [q0, q0 + W) into the group's tile of W slots (slots past `end` get mass 0 and
//! the position of source `pad_index`, a real one) and returns whether this lane's own slot is a
//! real source.
template <unsigned W, class T>
__device__ __forceinline__ bool stage_sources(const Body<T>* __restrict__ bodies, std::uint32_t q0, std::uint32_t end,
                                              std::uint32_t pad_index, Body<T>* tile, unsigned lane) {
  const std::uint32_t j = q0 + lane;
  const bool real = j < end;
  const Body<T> pad = bodies[pad_index];
  tile[lane] = real ? bodies[j] : Body<T>{pad.x, pad.y, pad.z, T(0)};
  __syncwarp();
  return real;
}

//! One-sided: the lane's targets against the W staged sources, read as broadcasts, forces on the
//! targets only (the sources' own forces are computed elsewhere).
template <unsigned W, class Agent, class T>
__device__ __forceinline__ void one_sided_batch(Agent& a, const Body<T>* tile, std::uint32_t real_sources) {
  for (unsigned s = 0; s < W; ++s) {
    const Body<T> bj = tile[s];
#pragma unroll
    for (int r = 0; r < decltype(a.t)::kTargets; ++r) {
      a.g(a.t.body[r], bj, a.t.acc[r]);
      if constexpr (Agent::kCounting) a.count += a.t.valid(r) && s < real_sources;
    }
  }
}

//! Batches of W sources in [begin, end): how many, and the most over the warp's groups (every
//! group of a warp sweeps that many, so that the warp's shuffles and barriers stay together).
template <unsigned W>
__device__ __forceinline__ std::uint32_t warp_batches(std::uint32_t begin, std::uint32_t end) {
  std::uint32_t b = (end - begin + W - 1) / W;
  if constexpr (W < 32) {
#pragma unroll
    for (unsigned w = W; w < 32; w *= 2) b = max(b, __shfl_xor_sync(kFullMask, b, w));
  }
  return b;
}

//! The lane's targets (already in `agent.t`) against sources [begin, end) in batches of W staged
//! in `tile` (the group's W slots; `lane` is the lane within the group); `self` when the sources
//! are the target chunk itself (pairs i < j only). The agent's batch<Self>(tile, q, real) returns
//! the reaction on the lane's own source of batch q; sink(j, reaction) receives it for every real
//! source j (one distinct j per lane). With `mutual` false the sources only act on the targets
//! (one_sided_batch) and the sink is not called. With W < 32 a warp holds 32 / W groups on items
//! of their own; each sweeps as many batches as the warp's longest (the rest padding, mass 0),
//! since the agents' shuffles need the whole warp. `mutual` and `self` may differ between groups.
template <class Agent, class T, class Sink>
__device__ __forceinline__ void sweep_sources(Agent& agent, const Body<T>* __restrict__ bodies, std::uint32_t begin,
                                              std::uint32_t end, bool self, bool mutual, Body<T>* tile, unsigned lane,
                                              Sink&& sink) {
  constexpr unsigned W = Agent::kWidth;
  if constexpr (W == 32) {
    std::uint32_t q = 0;
    for (std::uint32_t q0 = begin; q0 < end; q0 += 32, ++q) {
      const bool real = stage_sources<32>(bodies, q0, end, q0, tile, lane);
      const std::uint32_t real_sources = min(32u, end - q0);
      if (!mutual) {
        one_sided_batch<32>(agent, tile, real_sources);
      } else {
        const Acc4<T> react = self ? agent.template batch<true>(tile, q, real_sources)
                                   : agent.template batch<false>(tile, q, real_sources);
        if (real) sink(q0 + lane, react);
      }
      __syncwarp();  // the tile is restaged next
    }
  } else {
    // One code path for every group (the shuffles take the whole warp): one-sided items compute
    // the reactions too and drop them; a group past its sources stages padding (the position of
    // its first source, or of its first target when it has none).
    const std::uint32_t batches = warp_batches<W>(begin, end), pad = begin < end ? begin : agent.t.first - lane;
    for (std::uint32_t q = 0, q0 = begin; q < batches; q0 += W, ++q) {
      const bool real = stage_sources<W>(bodies, q0, end, q0 < end ? q0 : pad, tile, lane);
      const Acc4<T> react = agent.template batch<true>(tile, q, q0 < end ? min(W, end - q0) : 0u, self);
      if (real && mutual) sink(q0 + lane, react);
      __syncwarp();  // the tile is restaged next
    }
  }
}

namespace detail {
// Blocks per SM of a (device, kernel, block size, shared bytes), asked of CUDA once and kept: the
// occupancy query costs host time at every launch otherwise, while the GPU waits for the launch.
inline int blocks_per_sm(const void* kernel, int threads, std::size_t smem) {
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, int, std::size_t>, int> known;
  int device = 0;
  NF_CUDA(cudaGetDevice(&device));
  const auto key = std::make_tuple(device, kernel, threads, smem);
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = known.find(key);
  if (it != known.end()) return it->second;
  int per_sm = 0;
  NF_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  known.emplace(key, per_sm);
  return per_sm;
}
}  // namespace detail

//! Grid of a persistent launch: as many blocks as fit on the GPU at once (items are fetched
//! dynamically, so more blocks would only wait).
template <class Kernel>
unsigned resident_blocks(Kernel kernel, int threads, std::size_t smem) {
  const int per_sm = detail::blocks_per_sm(reinterpret_cast<const void*>(kernel), threads, smem);
  return static_cast<unsigned>(std::max(1, per_sm) * gpu::sm_count());
}

//! The next item (the first of `take` items) for this warp: lane 0 takes a ticket, every lane gets it.
__device__ __forceinline__ std::uint32_t next_item(std::uint32_t* counter, unsigned lane, std::uint32_t take = 1) {
  std::uint32_t it = 0;
  if (lane == 0) it = atomicAdd(counter, take);
  return __shfl_sync(kFullMask, it, 0);
}

}  // namespace nf::warp_pairs
