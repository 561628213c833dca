// GPU tree builder, stages "keys" and "sort": the Morton key of each particle's box (the box rule
// of box_rule.h, the same float64 operations as the CPU), then a stable radix sort of (key, input
// index) over only the key's dim*K bits. Keys of at most 32 bits are sorted as 32-bit words (in
// the first half of the 64-bit buffers): each pass then moves 8 bytes a particle, not 12.
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

template <int D, class Key>
__global__ void keys_kernel(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                            std::uint32_t n, int level, const Domain* __restrict__ domain, Key* __restrict__ keys,
                            std::uint32_t* __restrict__ index) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Domain dom = *domain;
  std::uint32_t c[D];
  c[0] = box_coordinate(x[i], dom.origin[0], dom.side, level);
  c[1] = box_coordinate(y[i], dom.origin[1], dom.side, level);
  if constexpr (D == 3) c[2] = box_coordinate(z[i], dom.origin[2], dom.side, level);
  keys[i] = static_cast<Key>(morton_key<D>(c));
  index[i] = i;
}

template <class Key>
std::size_t sort_temp_bytes_of(std::size_t n, int bits) {
  std::size_t bytes = 0;
  cub::DoubleBuffer<Key> k(nullptr, nullptr);
  cub::DoubleBuffer<std::uint32_t> v(nullptr, nullptr);
  NF_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, static_cast<int>(n), 0, std::max(1, bits)));
  return bytes;
}

}  // namespace

std::size_t sort_temp_bytes(std::size_t n, int bits) {
  return narrow_keys(bits) ? sort_temp_bytes_of<std::uint32_t>(n, bits) : sort_temp_bytes_of<std::uint64_t>(n, bits);
}

void compute_keys(const DeviceParticles& p, int level, Scratch& s) {
  if (p.n == 0) return;
  const std::uint32_t n = static_cast<std::uint32_t>(p.n);
  gpu::dispatch_dim(p.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    with_key_type(D * level, [&](auto key) {
      using Key = decltype(key);
      keys_kernel<D><<<gpu::blocks_for(n, KeysPolicy::threads), KeysPolicy::threads>>>(
          p.x.data(), p.y.data(), D == 3 ? p.z.data() : nullptr, n, level, s.domain.data(), key_data<Key>(s.keys),
          s.index.data());
    });
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
  with_key_type(bits, [&](auto key) {
    using Key = decltype(key);
    cub::DoubleBuffer<Key> keys(key_data<Key>(s.keys), key_data<Key>(s.sorted_keys));
    cub::DoubleBuffer<std::uint32_t> vals(s.index.data(), t.order.data());
    std::size_t bytes = s.temp.size();
    NF_CUDA(cub::DeviceRadixSort::SortPairs(s.temp.data(), bytes, keys, vals, static_cast<int>(t.n), 0, bits));
    // CUB leaves the result in whichever buffer its pass count ends on; the buffers trade places
    // instead of copying (the next build overwrites the input side anyway).
    if (keys.Current() != key_data<Key>(s.sorted_keys)) std::swap(s.sorted_keys, s.keys);
    if (vals.Current() != t.order.data()) std::swap(t.order, s.index);
  });
}

}  // namespace nf::tree_gpu
