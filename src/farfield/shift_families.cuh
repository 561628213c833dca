#pragma once
//! The last step of M2M on the GPU when a block holds consecutive children (shifts_thread.cuh,
//! shifts_line.cuh): each parent's children that the block holds, already shifted to the parent's
//! centre in rows of shared memory, summed in order and added into the parent's moments. CUDA only.

#include <cstdint>

#include "tree/levels_gpu.h"

namespace nf::farfield {

//! The block's children are fine boxes first .. first + count - 1, child c's shifted moments at
//! rows[(c - first) * S + n], n < N. Their families are listed by their first child here (in any
//! order: an adaptive level's parents with children need not be consecutive boxes), then each
//! parent term is its children's sum, added plainly where the block holds the whole family and
//! atomically where the family straddles blocks (only a block's first or last family can; with
//! the line kernels' 2 or 4 children a block a family spans up to 4 blocks).
//! `heads` holds count entries in shared memory; `families` is a shared counter. Ends with the
//! block's threads apart (no barrier after the adds).
template <class T>
__device__ __forceinline__ void add_families(const DeviceLevel& fine, const DeviceLevel& coarse, std::uint32_t first,
                                             std::uint32_t count, const T* rows, int S, int N, T* Mc,
                                             std::uint32_t* heads, std::uint32_t& families) {
  if (threadIdx.x == 0) families = 0;
  __syncthreads();
  if (threadIdx.x < count &&
      (threadIdx.x == 0 || fine.parent[first + threadIdx.x] != fine.parent[first + threadIdx.x - 1]))
    heads[atomicAdd(&families, 1u)] = threadIdx.x;
  __syncthreads();
  for (std::uint32_t i = threadIdx.x; i < families * N; i += blockDim.x) {
    const std::uint32_t h = heads[i / N], n = i % N, q = fine.parent[first + h];
    const std::uint32_t c0 = coarse.child[q], c1 = coarse.child[q + 1];
    const std::uint32_t hi = min(c1, first + count);
    T sum = T(0);
    for (std::uint32_t c = first + h; c < hi; ++c) sum += rows[(c - first) * S + n];
    if (c0 >= first && c1 <= first + count)
      Mc[std::size_t(q) * N + n] += sum;
    else
      atomicAdd(Mc + std::size_t(q) * N + n, sum);
  }
}

}  // namespace nf::farfield
