#pragma once
// CSR neighbor lists on the GPU, written once for the compact and the dense layout: one thread
// per box counts its neighbors (full, and those with a larger id), exclusive scans over capacity
// + 1 entries give the offsets (offset[count] = the total), and a second pass fills the ids. A
// `Source` says how many boxes there are (`count()`, read on the device) and what a box's
// neighbors are: `int operator()(std::uint32_t box, std::uint32_t* out)` writes them ascending and
// returns how many (at most 26).
#include <cub/device/device_scan.cuh>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/neighbors.h"
#include "tree/tree_gpu_stages.h"

namespace nf::tree_gpu {

struct ListsPolicy {
  static constexpr unsigned threads = 128;  // 26 neighbors of local state per thread in 3D
};

//! Compact layout: the non-empty neighbors of compact box k, as compact ids. M is read on the
//! device; with a map (box key -> compact id over all boxes) each neighbor is one load, else a
//! search among the non-empty keys near k's own.
template <int D>
struct CompactNeighbors {
  const std::uint64_t* box_key;
  const std::uint32_t* boxes;  //!< M, on the device
  const std::uint32_t* map;    //!< nbox entries (kNoBox: empty), or null
  int level;
  __device__ std::uint32_t count() const { return *boxes; }
  __device__ int operator()(std::uint32_t k, std::uint32_t* out) const {
    if (!map) return compact_neighbors<D>(box_key, *boxes, k, level, false, out);
    std::uint64_t keys[26];
    const int n = box_neighbor_keys<D>(box_key[k], level, keys);
    int found = 0;
    for (int j = 0; j < n; ++j) {  // ascending keys give ascending compact ids
      const std::uint32_t id = map[keys[j]];
      if (id != kNoBox) out[found++] = id;
    }
    return found;
  }
};

//! Dense layout: every neighbor of box b.
template <int D>
struct DenseNeighbors {
  int level;
  std::uint32_t nbox;
  __device__ std::uint32_t count() const { return nbox; }
  __device__ int operator()(std::uint32_t b, std::uint32_t* out) const { return box_neighbors<D>(b, level, false, out); }
};

// One thread per entry of [0, capacity]: boxes past source.count() (and the entry at `capacity`)
// count nothing, so that scans over capacity + 1 entries put the totals at offset[count] and after.
template <class Source>
__global__ void list_count_kernel(Source source, std::uint32_t capacity, std::uint32_t* __restrict__ full_count,
                                  std::uint32_t* __restrict__ half_count) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > capacity) return;
  if (b >= source.count()) {
    full_count[b] = half_count[b] = 0;
    return;
  }
  std::uint32_t nb[26];
  const int n = source(b, nb);
  std::uint32_t larger = 0;
  for (int k = 0; k < n; ++k) larger += nb[k] > b;
  full_count[b] = n;
  half_count[b] = larger;
}

// Ids at or past an id buffer's capacity (full_cap, half_cap) are not written: the host compares
// the totals with the capacities afterwards and fills again into larger buffers.
template <class Source>
__global__ void list_fill_kernel(Source source, std::uint32_t capacity, const std::uint32_t* __restrict__ full_offset,
                                 const std::uint32_t* __restrict__ half_offset, std::uint32_t* __restrict__ full_ids,
                                 std::uint32_t* __restrict__ half_ids, std::size_t full_cap, std::size_t half_cap) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= capacity || b >= source.count()) return;
  std::uint32_t nb[26];
  const int n = source(b, nb);
  std::size_t f = full_offset[b], h = half_offset[b];
  for (int k = 0; k < n; ++k) {
    if (f < full_cap) full_ids[f] = nb[k];
    ++f;
    if (nb[k] > b) {
      if (h < half_cap) half_ids[h] = nb[k];
      ++h;
    }
  }
}

//! CUB temporary bytes of an exclusive scan over `items` counts.
inline std::size_t scan_temp_bytes(std::uint64_t items) {
  std::size_t bytes = 0;
  NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<std::uint32_t*>(nullptr),
                                        static_cast<std::uint32_t*>(nullptr), static_cast<int>(items)));
  return bytes;
}

//! Counts (into s.full_count / s.half_count) and scans them into the offsets (capacity + 1
//! each; source.count() <= capacity boxes have lists, offset[count()] onwards is the total).
template <class Source>
void count_neighbors(const Source& source, std::uint32_t capacity, Scratch& s, std::uint32_t* full_offset,
                     std::uint32_t* half_offset) {
  const unsigned threads = ListsPolicy::threads;
  const std::uint32_t boxes = capacity;
  list_count_kernel<<<gpu::blocks_for(std::uint64_t(boxes) + 1, threads), threads>>>(source, boxes, s.full_count.data(),
                                                                                      s.half_count.data());
  NF_CUDA_LAUNCHED();
  auto scan = [&](const std::uint32_t* count, std::uint32_t* offset) {
    std::size_t bytes = s.temp.size();
    NF_CUDA(cub::DeviceScan::ExclusiveSum(s.temp.data(), bytes, count, offset, static_cast<int>(boxes + 1)));
  };
  scan(s.full_count.data(), full_offset);
  scan(s.half_count.data(), half_offset);
}

//! Writes the ids at the offsets count_neighbors produced, at most full_cap / half_cap of each.
template <class Source>
void fill_neighbors(const Source& source, std::uint32_t capacity, const std::uint32_t* full_offset,
                    const std::uint32_t* half_offset, std::uint32_t* full_ids, std::uint32_t* half_ids,
                    std::size_t full_cap, std::size_t half_cap) {
  if (capacity == 0) return;
  const unsigned threads = ListsPolicy::threads;
  list_fill_kernel<<<gpu::blocks_for(capacity, threads), threads>>>(source, capacity, full_offset, half_offset, full_ids,
                                                                     half_ids, full_cap, half_cap);
  NF_CUDA_LAUNCHED();
}

}  // namespace nf::tree_gpu
