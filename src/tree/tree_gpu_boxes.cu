// GPU tree builder, stage "boxes": the non-empty boxes are the runs of equal sorted keys. One
// inclusive scan of the run-start flags numbers each particle's box (its compact id + 1), and the
// scan's output writes the compact arrays as it goes (particle_compact_box, and at a run start
// box_key and box_first); one thread per box then finds the largest box.
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/tree_gpu_stages.h"

namespace nf::tree_gpu {
namespace {

struct BoxesPolicy {
  static constexpr unsigned threads = 256;
};

//! 1 where sorted position s starts a run of equal keys (a non-empty box), else 0.
template <class Key>
struct RunStart {
  const Key* keys;
  __host__ __device__ std::uint32_t operator()(std::uint32_t s) const { return s == 0 || keys[s] != keys[s - 1]; }
};

template <class Key>
using RunStarts = thrust::transform_iterator<RunStart<Key>, thrust::counting_iterator<std::uint32_t>>;

template <class Key>
RunStarts<Key> run_starts(const Key* keys) {
  return RunStarts<Key>(thrust::counting_iterator<std::uint32_t>(0), RunStart<Key>{keys});
}

//! The scan's output at sorted position s, given the inclusive count of run starts up to s (its
//! box's compact id + 1).
template <class Key>
struct BoxWriter {
  const Key* keys;
  std::uint32_t n;
  std::uint32_t* particle_compact_box;
  std::uint64_t* box_key;
  std::uint32_t* box_first;
  std::uint32_t* counters;
  __device__ void operator()(std::ptrdiff_t at, std::uint32_t starts) const {
    const std::uint32_t s = static_cast<std::uint32_t>(at), box = starts - 1;
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
};

template <class Key>
using BoxOutput = thrust::tabulate_output_iterator<BoxWriter<Key>>;

// One thread per box of the capacity; M comes from counters[kBoxes] (the scan's BoxWriter wrote it).
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
  for (int bits : {32, 64})  // the larger of the two key words' needs
    with_key_type(bits, [&](auto key) {
      using Key = decltype(key);
      std::size_t b = 0;
      NF_CUDA(cub::DeviceScan::InclusiveSum(nullptr, b, run_starts<Key>(nullptr), BoxOutput<Key>(BoxWriter<Key>{}),
                                            static_cast<int>(n)));
      bytes = std::max(bytes, b);
    });
  return bytes;
}

void find_boxes(DeviceTree& t, Scratch& s) {
  s.counters.fill(0);
  if (t.n == 0) {
    t.box_first.fill(0);  // box_first[0] = 0: no boxes
    t.nonempty_count = 0;
    return;
  }
  with_key_type(t.dim * t.level, [&](auto key) {
    using Key = decltype(key);
    const Key* keys = key_data<Key>(s.sorted_keys);
    const BoxWriter<Key> write{keys, t.n, t.particle_compact_box.data(), t.box_key.data(), t.box_first.data(),
                               s.counters.data()};
    std::size_t bytes = s.temp.size();
    NF_CUDA(cub::DeviceScan::InclusiveSum(s.temp.data(), bytes, run_starts<Key>(keys), BoxOutput<Key>(write),
                                          static_cast<int>(t.n)));
  });
  // M stays on the device: the next stages run over the capacity and read it there.
  const std::uint32_t capacity = static_cast<std::uint32_t>(t.box_key.size());
  max_count_kernel<<<gpu::blocks_for(capacity, BoxesPolicy::threads), BoxesPolicy::threads>>>(
      t.box_first.data(), capacity, s.counters.data());
  NF_CUDA_LAUNCHED();
}

}  // namespace nf::tree_gpu
