#pragma once
// CSR neighbor lists on the GPU, written once for the compact and the dense layout: one thread
// per box counts its neighbors (full, and those with a larger id), exclusive scans over boxes + 1
// entries give the offsets (offset[boxes] = the total), and a second pass fills the ids. A
// `Source` says what a box's neighbors are: `int operator()(std::uint32_t box, std::uint32_t* out)`
// writes them ascending and returns how many (at most 26).
#include <cub/device/device_scan.cuh>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/neighbors.h"
#include "tree/tree_gpu_stages.h"

namespace nf::tree_gpu {

struct ListsPolicy {
  static constexpr unsigned threads = 128;  // 26 neighbors of local state per thread in 3D
};

//! Compact layout: the non-empty neighbors of compact box k, as compact ids.
template <int D>
struct CompactNeighbors {
  const std::uint64_t* box_key;
  std::uint32_t boxes;
  int level;
  __device__ int operator()(std::uint32_t k, std::uint32_t* out) const {
    return compact_neighbors<D>(box_key, boxes, k, level, false, out);
  }
};

//! Dense layout: every neighbor of box b.
template <int D>
struct DenseNeighbors {
  int level;
  __device__ int operator()(std::uint32_t b, std::uint32_t* out) const { return box_neighbors<D>(b, level, false, out); }
};

template <class Source>
__global__ void list_count_kernel(Source source, std::uint32_t boxes, std::uint32_t* __restrict__ full_count,
                                  std::uint32_t* __restrict__ half_count) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > boxes) return;
  if (b == boxes) {  // the scans run over boxes + 1 entries so that offset[boxes] is the total
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

template <class Source>
__global__ void list_fill_kernel(Source source, std::uint32_t boxes, const std::uint32_t* __restrict__ full_offset,
                                 const std::uint32_t* __restrict__ half_offset, std::uint32_t* __restrict__ full_ids,
                                 std::uint32_t* __restrict__ half_ids) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= boxes) return;
  std::uint32_t nb[26];
  const int n = source(b, nb);
  std::uint32_t f = full_offset[b], h = half_offset[b];
  for (int k = 0; k < n; ++k) {
    full_ids[f++] = nb[k];
    if (nb[k] > b) half_ids[h++] = nb[k];
  }
}

//! CUB temporary bytes of an exclusive scan over `items` counts.
inline std::size_t scan_temp_bytes(std::uint64_t items) {
  std::size_t bytes = 0;
  NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<std::uint32_t*>(nullptr),
                                        static_cast<std::uint32_t*>(nullptr), static_cast<int>(items)));
  return bytes;
}

//! Counts (into s.full_count / s.half_count) and scans them into the offsets (boxes + 1 each).
template <class Source>
void count_neighbors(const Source& source, std::uint32_t boxes, Scratch& s, std::uint32_t* full_offset,
                     std::uint32_t* half_offset) {
  const unsigned threads = ListsPolicy::threads;
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

//! Writes the ids at the offsets count_neighbors produced.
template <class Source>
void fill_neighbors(const Source& source, std::uint32_t boxes, const std::uint32_t* full_offset,
                    const std::uint32_t* half_offset, std::uint32_t* full_ids, std::uint32_t* half_ids) {
  if (boxes == 0) return;
  const unsigned threads = ListsPolicy::threads;
  list_fill_kernel<<<gpu::blocks_for(boxes, threads), threads>>>(source, boxes, full_offset, half_offset, full_ids,
                                                                  half_ids);
  NF_CUDA_LAUNCHED();
}

}  // namespace nf::tree_gpu
