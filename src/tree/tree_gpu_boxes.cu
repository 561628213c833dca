// GPU tree builder, stage "boxes": the non-empty boxes are the runs of equal sorted keys. An
// inclusive scan of the run-start flags numbers each particle's box (its compact id + 1); one
// thread per particle then writes the compact arrays, and one per box finds the largest box.
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/tree_gpu_stages.h"

namespace nf::tree_gpu {
namespace {

struct BoxesPolicy {
  static constexpr unsigned threads = 256;
};

//! 1 where sorted position s starts a run of equal keys (a non-empty box), else 0.
struct RunStart {
  const std::uint64_t* keys;
  __host__ __device__ std::uint32_t operator()(std::uint32_t s) const { return s == 0 || keys[s] != keys[s - 1]; }
};

using RunStarts = thrust::transform_iterator<RunStart, thrust::counting_iterator<std::uint32_t>>;

RunStarts run_starts(const std::uint64_t* keys) {
  return RunStarts(thrust::counting_iterator<std::uint32_t>(0), RunStart{keys});
}

// particle_compact_box holds the inclusive scan of the run starts (compact id + 1) on entry.
__global__ void box_fill_kernel(const std::uint64_t* __restrict__ keys, std::uint32_t n,
                                std::uint32_t* __restrict__ particle_compact_box, std::uint64_t* __restrict__ box_key,
                                std::uint32_t* __restrict__ box_first, std::uint32_t* __restrict__ counters) {
  const std::uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const std::uint32_t box = particle_compact_box[s] - 1;
  particle_compact_box[s] = box;
  if (s == 0 || keys[s] != keys[s - 1]) {
    box_key[box] = keys[s];
    box_first[box] = s;
  }
  if (s == n - 1) {
    box_first[box + 1] = n;
    counters[kBoxes] = box + 1;
  }
}

// One thread per box of the capacity; M comes from counters[kBoxes] (box_fill_kernel wrote it).
__global__ void max_count_kernel(const std::uint32_t* __restrict__ box_first, std::uint32_t capacity,
                                 std::uint32_t* __restrict__ counters) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k - (k & 31u) >= capacity) return;  // whole warps only: the shuffles below need all 32 lanes
  const std::uint32_t boxes = counters[kBoxes];
  std::uint32_t c = k < boxes ? box_first[k + 1] - box_first[k] : 0;
  for (int off = 16; off > 0; off >>= 1) c = max(c, __shfl_xor_sync(0xffffffffu, c, off));
  if ((threadIdx.x & 31) == 0 && c > 0) atomicMax(&counters[kMaxCount], c);
}

}  // namespace

std::size_t boxes_temp_bytes(std::size_t n) {
  std::size_t bytes = 0;
  NF_CUDA(cub::DeviceScan::InclusiveSum(nullptr, bytes, run_starts(nullptr), static_cast<std::uint32_t*>(nullptr),
                                        static_cast<int>(n)));
  return bytes;
}

void find_boxes(DeviceTree& t, Scratch& s) {
  s.counters.fill(0);
  if (t.n == 0) {
    t.box_first.fill(0);  // box_first[0] = 0: no boxes
    t.nonempty_count = 0;
    return;
  }
  std::size_t bytes = s.temp.size();
  NF_CUDA(cub::DeviceScan::InclusiveSum(s.temp.data(), bytes, run_starts(s.sorted_keys.data()), t.particle_compact_box.data(),
                                        static_cast<int>(t.n)));
  box_fill_kernel<<<gpu::blocks_for(t.n, BoxesPolicy::threads), BoxesPolicy::threads>>>(
      s.sorted_keys.data(), t.n, t.particle_compact_box.data(), t.box_key.data(), t.box_first.data(), s.counters.data());
  NF_CUDA_LAUNCHED();
  // M stays on the device: the next stages run over the capacity and read it there.
  const std::uint32_t capacity = static_cast<std::uint32_t>(t.box_key.size());
  max_count_kernel<<<gpu::blocks_for(capacity, BoxesPolicy::threads), BoxesPolicy::threads>>>(
      t.box_first.data(), capacity, s.counters.data());
  NF_CUDA_LAUNCHED();
}

}  // namespace nf::tree_gpu
