#pragma once
// The per-thread work of the box-per-block kernels (bpb, bpb-lb): one target particle in
// registers against a tile of sources staged in shared memory.
#include "physics/interaction.h"
#include "nearfield/box_tiles.cuh"

namespace nf {

struct BpbPolicy {
  static constexpr int unroll = 8;  // inner loop over a staged tile
};

template <int D, class T, bool Guarded, bool Counting>
struct BpbAgent {
  const SoftenedGravity<D, T, Guarded> g;
  Body<T>* tile;
  Body<T> me;
  Acc4<T> acc;
  unsigned long long count;

  // Adds tile[0, m) to the accumulator, leaving out tile index `self` (the thread's own
  // particle, or any value >= m when it is not in this tile).
  __device__ __forceinline__ void add_tile(std::uint32_t m, std::uint32_t self) {
#pragma unroll BpbPolicy::unroll
    for (std::uint32_t k = 0; k < m; ++k) {
      if (k == self) continue;
      g(me, tile[k], acc);
      if constexpr (Counting) ++count;
    }
  }
};

}  // namespace nf
