// The floor of the build's sort stage: cub::DeviceRadixSort::SortPairs alone on the same keys,
// timed with CUDA events. Not part of the builder (bench --tree calls it after a build).
#include <cub/device/device_radix_sort.cuh>

#include "core/cuda_check.cuh"
#include "tree/tree_gpu.h"

namespace nf {

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
  const gpu::DeviceBuffer<std::uint64_t> keys_orig(k);
  const gpu::DeviceBuffer<std::uint32_t> vals_orig(v);
  gpu::DeviceBuffer<std::uint64_t> keys_in(t.n), keys_out(t.n);
  gpu::DeviceBuffer<std::uint32_t> vals_in(t.n), vals_out(t.n);
  const int bits = t.dim * t.level, n = static_cast<int>(t.n);
  std::size_t temp_bytes = 0;
  {
    cub::DoubleBuffer<std::uint64_t> kb(nullptr, nullptr);
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
    cub::DoubleBuffer<std::uint64_t> kb(keys_in.data(), keys_out.data());
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

}  // namespace nf
