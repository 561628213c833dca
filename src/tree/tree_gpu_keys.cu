// GPU tree builder, stages "keys" and "sort": the 64-bit Morton key of each particle's box (the
// box rule of box_rule.h, the same float64 operations as the CPU), then a stable radix sort of
// (key, input index) over only the key's dim*K bits.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <utility>

#include "tree/box_rule.h"
#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/morton.h"
#include "tree/tree_gpu_stages.h"

namespace nf::tree_gpu {
namespace {

struct KeysPolicy {
  static constexpr unsigned threads = 256;
};

template <int D>
__global__ void keys_kernel(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                            std::uint32_t n, int level, const Domain* __restrict__ domain,
                            std::uint64_t* __restrict__ keys, std::uint32_t* __restrict__ index) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Domain dom = *domain;
  std::uint32_t c[D];
  c[0] = box_coordinate(x[i], dom.origin[0], dom.side, level);
  c[1] = box_coordinate(y[i], dom.origin[1], dom.side, level);
  if constexpr (D == 3) c[2] = box_coordinate(z[i], dom.origin[2], dom.side, level);
  keys[i] = morton_key<D>(c);
  index[i] = i;
}

}  // namespace

std::size_t sort_temp_bytes(std::size_t n, int bits) {
  std::size_t bytes = 0;
  cub::DoubleBuffer<std::uint64_t> k(nullptr, nullptr);
  cub::DoubleBuffer<std::uint32_t> v(nullptr, nullptr);
  NF_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, static_cast<int>(n), 0, std::max(1, bits)));
  return bytes;
}

void compute_keys(const DeviceParticles& p, int level, Scratch& s) {
  if (p.n == 0) return;
  const std::uint32_t n = static_cast<std::uint32_t>(p.n);
  gpu::dispatch_dim(p.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    keys_kernel<D><<<gpu::blocks_for(n, KeysPolicy::threads), KeysPolicy::threads>>>(
        p.x.data(), p.y.data(), D == 3 ? p.z.data() : nullptr, n, level, s.domain.data(), s.keys.data(),
        s.index.data());
    NF_CUDA_LAUNCHED();
  });
}

void sort_keys(DeviceTree& t, Scratch& s) {
  if (t.n == 0) return;
  const int bits = t.dim * t.level;
  if (bits == 0) {  // one box: the keys and the identity are already sorted
    std::swap(s.sorted_keys, s.keys);
    std::swap(t.order, s.index);
    return;
  }
  cub::DoubleBuffer<std::uint64_t> keys(s.keys.data(), s.sorted_keys.data());
  cub::DoubleBuffer<std::uint32_t> vals(s.index.data(), t.order.data());
  std::size_t bytes = s.temp.size();
  NF_CUDA(cub::DeviceRadixSort::SortPairs(s.temp.data(), bytes, keys, vals, static_cast<int>(t.n), 0, bits));
  // CUB leaves the result in whichever buffer its pass count ends on; the buffers trade places
  // instead of copying (the next build overwrites the input side anyway).
  if (keys.Current() != s.sorted_keys.data()) std::swap(s.sorted_keys, s.keys);
  if (vals.Current() != t.order.data()) std::swap(t.order, s.index);
}

}  // namespace nf::tree_gpu
