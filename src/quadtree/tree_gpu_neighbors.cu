// GPU tree builder, stage "neighbors": the compact lists. One thread per non-empty box looks its
// 3^D - 1 neighbor keys up among the sorted non-empty keys (compact_neighbors, shared with the
// CPU builder), first to count, then, after exclusive scans give the offsets, to fill.
#include <cub/device/device_scan.cuh>

#include "common/cuda_check.cuh"
#include "common/launch.cuh"
#include "quadtree/neighbors.h"
#include "quadtree/tree_gpu_stages.h"

namespace nf::tree_gpu {
namespace {

struct NeighborsPolicy {
  static constexpr unsigned threads = 128;  // 26 keys of local state per thread in 3D
};

template <int D>
__global__ void compact_count_kernel(const std::uint64_t* __restrict__ box_key, std::uint32_t boxes, int level,
                                     std::uint32_t* __restrict__ full_count, std::uint32_t* __restrict__ half_count) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k > boxes) return;
  if (k == boxes) {  // the scans run over M + 1 entries so that offset[M] is the total
    full_count[k] = half_count[k] = 0;
    return;
  }
  std::uint32_t nb[26];
  const int n = compact_neighbors<D>(box_key, boxes, k, level, false, nb);
  std::uint32_t larger = 0;
  for (int j = 0; j < n; ++j) larger += nb[j] > k;
  full_count[k] = n;
  half_count[k] = larger;
}

template <int D>
__global__ void compact_fill_kernel(const std::uint64_t* __restrict__ box_key, std::uint32_t boxes, int level,
                                    const std::uint32_t* __restrict__ full_offset,
                                    const std::uint32_t* __restrict__ half_offset, std::uint32_t* __restrict__ full_ids,
                                    std::uint32_t* __restrict__ half_ids) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= boxes) return;
  std::uint32_t nb[26];
  const int n = compact_neighbors<D>(box_key, boxes, k, level, false, nb);
  std::uint32_t f = full_offset[k], h = half_offset[k];
  for (int j = 0; j < n; ++j) {
    full_ids[f++] = nb[j];
    if (nb[j] > k) half_ids[h++] = nb[j];
  }
}

// Capacity for `need` entries, with headroom so that rebuilds of moving particles rarely
// reallocate.
void reserve(gpu::DeviceBuffer<std::uint32_t>& b, std::uint32_t need) {
  if (b.size() < need || b.size() == 0) b = gpu::DeviceBuffer<std::uint32_t>(std::size_t(need) + need / 8 + 1);
}

}  // namespace

std::size_t neighbors_temp_bytes(std::size_t boxes) {
  std::size_t bytes = 0;
  NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<std::uint32_t*>(nullptr),
                                        static_cast<std::uint32_t*>(nullptr), static_cast<int>(boxes + 1)));
  return bytes;
}

void build_compact_lists(DeviceTree& t, Scratch& s) {
  const std::uint32_t m = t.nonempty_count;
  gpu::dispatch_dim(t.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    compact_count_kernel<D><<<gpu::blocks_for(std::uint64_t(m) + 1, NeighborsPolicy::threads), NeighborsPolicy::threads>>>(
        t.box_key.data(), m, t.level, s.full_count.data(), s.half_count.data());
    NF_CUDA_LAUNCHED();
  });
  std::size_t bytes = s.temp.size();
  NF_CUDA(cub::DeviceScan::ExclusiveSum(s.temp.data(), bytes, s.full_count.data(), t.near_full_offset.data(),
                                        static_cast<int>(m + 1)));
  bytes = s.temp.size();
  NF_CUDA(cub::DeviceScan::ExclusiveSum(s.temp.data(), bytes, s.half_count.data(), t.near_half_offset.data(),
                                        static_cast<int>(m + 1)));
  // The totals size the id buffers: one small synchronous read each.
  gpu::copy_to_host(&t.near_full_links, t.near_full_offset.data() + m, sizeof(std::uint32_t));
  gpu::copy_to_host(&t.near_half_links, t.near_half_offset.data() + m, sizeof(std::uint32_t));
  reserve(t.near_full_ids, t.near_full_links);
  reserve(t.near_half_ids, t.near_half_links);
  if (m == 0) return;
  gpu::dispatch_dim(t.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    compact_fill_kernel<D><<<gpu::blocks_for(m, NeighborsPolicy::threads), NeighborsPolicy::threads>>>(
        t.box_key.data(), m, t.level, t.near_full_offset.data(), t.near_half_offset.data(), t.near_full_ids.data(),
        t.near_half_ids.data());
    NF_CUDA_LAUNCHED();
  });
}

}  // namespace nf::tree_gpu
