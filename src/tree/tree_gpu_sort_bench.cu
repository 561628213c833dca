// The floor of the build's sort stage: cub::DeviceRadixSort::SortPairs alone on the same keys,
// timed with CUDA events. Not part of the builder (bench --tree calls it after a build).
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>

#include "core/cuda_check.cuh"
#include "tree/tree_gpu.h"

namespace nf {

namespace {

template <class Key>
std::vector<double> time_sort(const std::vector<std::uint64_t>& k, const std::vector<std::uint32_t>& v, int bits,
                              int warmup, int reps) {
  const std::vector<Key> narrow(k.begin(), k.end());
  const gpu::DeviceBuffer<Key> keys_orig(narrow);
  const gpu::DeviceBuffer<std::uint32_t> vals_orig(v);
  gpu::DeviceBuffer<Key> keys_in(k.size()), keys_out(k.size());
  gpu::DeviceBuffer<std::uint32_t> vals_in(v.size()), vals_out(v.size());
  const int n = static_cast<int>(k.size());
  std::size_t temp_bytes = 0;
  {
    cub::DoubleBuffer<Key> kb(nullptr, nullptr);
    cub::DoubleBuffer<std::uint32_t> vb(nullptr, nullptr);
    NF_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kb, vb, n, 0, bits));
  }
  gpu::DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
  gpu::EventTimer timer;
  std::vector<double> ms;
  for (int r = 0; r < warmup + reps; ++r) {
    // Sorting clobbers its inputs: each run starts from a fresh copy.
    gpu::copy_on_device(keys_in.data(), keys_orig.data(), keys_in.bytes());
    gpu::copy_on_device(vals_in.data(), vals_orig.data(), vals_in.bytes());
    cub::DoubleBuffer<Key> kb(keys_in.data(), keys_out.data());
    cub::DoubleBuffer<std::uint32_t> vb(vals_in.data(), vals_out.data());
    std::size_t bytes = temp.size();
    timer.start();
    NF_CUDA(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, kb, vb, n, 0, bits));
    timer.stop();
    const double e = timer.elapsed_ms();
    if (r >= warmup) ms.push_back(e);
  }
  return ms;
}

}  // namespace

std::vector<double> time_bare_sort(const DeviceTree& t, int warmup, int reps) {
  if (t.n == 0 || t.level == 0) return std::vector<double>(static_cast<std::size_t>(reps), 0.0);
  // The keys the build sorted, in input order: key of sorted position s is box_key[compact[s]],
  // and it belongs to input row order[s].
  std::vector<std::uint64_t> k(t.n);
  std::vector<std::uint32_t> v(t.n);
  {
    const std::vector<std::uint32_t> order = t.order.download(), compact = t.particle_compact_box.download();
    const std::vector<std::uint64_t> box_key = t.box_key.download();
    for (std::uint32_t s = 0; s < t.n; ++s) k[order[s]] = box_key[compact[s]], v[s] = s;
  }
  // The build's key word: 32 bits when the keys fit (tree_gpu_stages.h, narrow_keys).
  const int bits = t.dim * t.level;
  return bits <= 32 ? time_sort<std::uint32_t>(k, v, bits, warmup, reps) : time_sort<std::uint64_t>(k, v, bits, warmup, reps);
}

}  // namespace nf
