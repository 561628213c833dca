// The tree with levels on the GPU (tree/levels_gpu.h): per level, from fine to coarse, a flag
// where a box's parent key differs from the previous box's, an inclusive scan of the flags (the
// parent's compact id + 1), and one thread per fine box writing the parent ids and, at each run
// start, the coarse box's key, first particle and first child.
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/levels_gpu.h"

namespace nf {
namespace {

constexpr unsigned kThreads = 256;

__global__ void parent_start_kernel(const std::uint64_t* __restrict__ key, std::uint32_t m, int dim,
                                    std::uint32_t* __restrict__ flag) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < m) flag[b] = b == 0 || (key[b] >> dim) != (key[b - 1] >> dim);
}

// parent holds the inclusive scan of the run-start flags on entry (parent id + 1).
__global__ void coarse_fill_kernel(const std::uint64_t* __restrict__ key, const std::uint32_t* __restrict__ first,
                                   std::uint32_t m, int dim, std::uint32_t* __restrict__ parent,
                                   std::uint64_t* __restrict__ coarse_key, std::uint32_t* __restrict__ coarse_first,
                                   std::uint32_t* __restrict__ coarse_child, std::uint32_t* __restrict__ count) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= m) return;
  const std::uint32_t q = parent[b] - 1;
  parent[b] = q;
  if (b == 0 || (key[b] >> dim) != (key[b - 1] >> dim)) {
    coarse_key[q] = key[b] >> dim;
    coarse_first[q] = first[b];
    coarse_child[q] = b;
  }
  if (b == m - 1) {
    coarse_first[q + 1] = first[m];
    coarse_child[q + 1] = m;
    *count = q + 1;
  }
}

}  // namespace

void DeviceLevels::build(const DeviceTree& t) {
  dim = t.dim;
  leaf = t.level;
  domain = t.domain;
  level.assign(std::size_t(leaf) + 1, DeviceLevel{});
  if (store_.size() != level.size()) {
    store_.clear();
    store_.resize(level.size());
  }
  if (count_.size() == 0) count_ = gpu::DeviceBuffer<std::uint32_t>(1);
  // Capacities: at most N boxes at any level and 2^(d l) at level l (plus one for the offsets).
  auto capacity = [&](int l) {
    const std::uint64_t grid = dim * l >= 40 ? ~std::uint64_t(0) : std::uint64_t(1) << (dim * l);
    return std::size_t(std::min<std::uint64_t>(std::max<std::uint64_t>(t.n, 1), grid)) + 1;
  };
  for (int l = 0; l <= leaf; ++l) {
    Storage& s = store_[l];
    const std::size_t c = capacity(l);
    if (l > 0 && s.parent.size() < c) s.parent = gpu::DeviceBuffer<std::uint32_t>(c);
    if (l < leaf && s.key.size() < c) {
      s.key = gpu::DeviceBuffer<std::uint64_t>(c);
      s.first = gpu::DeviceBuffer<std::uint32_t>(c);
      s.child = gpu::DeviceBuffer<std::uint32_t>(c);
    }
  }
  DeviceLevel& top = level[leaf];
  top.boxes = t.n ? t.nonempty_count : 0;
  top.key = t.box_key.data();
  top.first = t.box_first.data();
  for (int l = leaf; l > 0; --l) {
    DeviceLevel& fine = level[l];
    DeviceLevel& coarse = level[l - 1];
    Storage& fs = store_[l];
    Storage& cs = store_[l - 1];
    fine.parent = fs.parent.data();
    coarse.key = cs.key.data();
    coarse.first = cs.first.data();
    coarse.child = cs.child.data();
    const std::uint32_t m = fine.boxes;
    if (m == 0) {  // no particles: every level is empty, offsets {0}
      NF_CUDA(cudaMemsetAsync(cs.first.data(), 0, sizeof(std::uint32_t)));
      NF_CUDA(cudaMemsetAsync(cs.child.data(), 0, sizeof(std::uint32_t)));
      coarse.boxes = 0;
      continue;
    }
    parent_start_kernel<<<gpu::blocks_for(m, kThreads), kThreads>>>(fine.key, m, dim, fs.parent.data());
    NF_CUDA(cudaGetLastError());
    std::size_t bytes = 0;
    NF_CUDA(cub::DeviceScan::InclusiveSum(nullptr, bytes, fs.parent.data(), fs.parent.data(), m));
    NF_CUDA(cub::DeviceScan::InclusiveSum(temp_.get(bytes), bytes, fs.parent.data(), fs.parent.data(), m));
    coarse_fill_kernel<<<gpu::blocks_for(m, kThreads), kThreads>>>(fine.key, fine.first, m, dim, fs.parent.data(),
                                                                   cs.key.data(), cs.first.data(), cs.child.data(),
                                                                   count_.data());
    NF_CUDA(cudaGetLastError());
    coarse.boxes = count_.download()[0];
  }
}

}  // namespace nf
