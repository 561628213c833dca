#include "nearfield/pair_items.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "common/cuda_check.cuh"
#include "common/launch.cuh"

namespace nf {
namespace {

struct BoxGraph {
  const std::uint32_t *box_start, *half_offset, *half_ids;  // compact: box k is [box_start[k], box_start[k+1])
  std::uint32_t chunk;
  const std::uint8_t* small;  // null: every box big
  __device__ std::uint32_t count(std::uint32_t box) const { return box_start[box + 1] - box_start[box]; }
  __device__ std::uint32_t chunks(std::uint32_t n) const { return (n + chunk - 1) / chunk; }
  __device__ bool is_small(std::uint32_t box) const { return small && small[box]; }
  // The items of box k with its half neighbor nb: both big, chunks x chunks, mutual; one small,
  // the big box's chunks against it, one-sided; both small, none.
  __device__ std::uint32_t link_items(std::uint32_t k, std::uint32_t nb) const {
    const bool sk = is_small(k), sn = is_small(nb);
    if (sk && sn) return 0;
    if (sk) return chunks(count(nb));
    if (sn) return chunks(count(k));
    return chunks(count(k)) * chunks(count(nb));
  }
  // Items of non-empty box k: chunk pairs of the box with itself (big boxes), then each half link.
  __device__ std::uint32_t items_of(std::uint32_t k) const {
    const std::uint32_t c = is_small(k) ? 0 : chunks(count(k));
    std::uint32_t total = c * (c + 1) / 2;
    for (std::uint32_t l = half_offset[k]; l < half_offset[k + 1]; ++l) total += link_items(k, half_ids[l]);
    return total;
  }
  __device__ PairItem chunk_pair(std::uint32_t a, std::uint32_t ca, std::uint32_t b, std::uint32_t cb, bool one_sided) const {
    const std::uint32_t fa = box_start[a], fb = box_start[b];
    return {fa + ca * chunk, min(fa + (ca + 1) * chunk, box_start[a + 1]), fb + cb * chunk,
            min(fb + (cb + 1) * chunk, box_start[b + 1]), one_sided ? 1u : 0u};
  }
};

__global__ void count_kernel(BoxGraph g, std::uint32_t m, std::uint32_t* counts) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < m) counts[k] = g.items_of(k);
  if (k == m) counts[m] = 0;  // the scan's last entry becomes the total
}

// One thread per item: find its box by binary search over the offsets, then decode which chunk
// pair of which (box, neighbor) it is. Parallel over items, so a giant box is no serial bottleneck.
__global__ void fill_kernel(BoxGraph g, std::uint32_t m, const std::uint32_t* offsets, PairItem* items) {
  const std::uint32_t it = blockIdx.x * blockDim.x + threadIdx.x;
  if (it >= offsets[m]) return;
  std::uint32_t lo = 0, hi = m;  // last k with offsets[k] <= it
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (offsets[mid] <= it) lo = mid;
    else hi = mid;
  }
  const std::uint32_t box = lo, c = g.is_small(box) ? 0 : g.chunks(g.count(box));
  std::uint32_t local = it - offsets[lo];
  const std::uint32_t own = c * (c + 1) / 2;
  if (local < own) {
    // Row ci holds the chunk pairs (ci, ci), (ci, ci + 1), ..., (ci, c - 1).
    std::uint32_t ci = 0;
    while (local >= c - ci) local -= c - ci++;
    items[it] = g.chunk_pair(box, ci, box, ci + local, false);
    return;
  }
  local -= own;
  for (std::uint32_t l = g.half_offset[box];; ++l) {
    const std::uint32_t nb = g.half_ids[l], here = g.link_items(box, nb);
    if (local < here) {
      if (g.is_small(box))  // the neighbor's chunks against this small box
        items[it] = g.chunk_pair(nb, local, box, 0, true);
      else if (g.is_small(nb))  // this box's chunks against the small neighbor
        items[it] = g.chunk_pair(box, local, nb, 0, true);
      else {
        const std::uint32_t cn = g.chunks(g.count(nb));
        items[it] = g.chunk_pair(box, local / cn, nb, local % cn, false);
      }
      return;
    }
    local -= here;
  }
}

// Size class of each item (targets <= 32 * 2^class) and a histogram of the classes.
__global__ void classify_kernel(const PairItem* items, std::uint32_t n, std::uint8_t* keys, std::uint32_t* counts) {
  __shared__ std::uint32_t local[PairItemList::kClasses];
  if (threadIdx.x < PairItemList::kClasses) local[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t it = blockIdx.x * blockDim.x + threadIdx.x;
  if (it < n) {
    const std::uint32_t targets = items[it].a_end - items[it].a_begin;
    std::uint8_t c = 0;
    while (c + 1 < PairItemList::kClasses && (32u << c) < targets) ++c;
    keys[it] = c;
    atomicAdd(&local[c], 1u);
  }
  __syncthreads();
  if (threadIdx.x < PairItemList::kClasses && local[threadIdx.x]) atomicAdd(&counts[threadIdx.x], local[threadIdx.x]);
}

}  // namespace

void PairItemList::build(const std::uint32_t* box_start, std::uint32_t m, const std::uint32_t* half_offset,
                         const std::uint32_t* half_ids, std::uint32_t chunk, bool classify, const std::uint8_t* small) {
  size_ = 0;
  sorted_ = false;
  for (std::uint32_t& c : class_begin_) c = 0;
  if (m == 0) return;
  const BoxGraph g{box_start, half_offset, half_ids, chunk, small};
  if (offsets_.size() < m + 1) offsets_ = gpu::DeviceBuffer<std::uint32_t>(m + 1);
  std::size_t need = 0;
  NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, need, offsets_.data(), offsets_.data(), static_cast<int>(m + 1)));
  if (temp_.size() < need) temp_ = gpu::DeviceBuffer<unsigned char>(need);
  count_kernel<<<gpu::div_up(m + 1, 256), 256>>>(g, m, offsets_.data());
  NF_CUDA_LAUNCHED();
  NF_CUDA(cub::DeviceScan::ExclusiveSum(temp_.data(), need, offsets_.data(), offsets_.data(), static_cast<int>(m + 1)));
  NF_CUDA(cudaMemcpy(&size_, offsets_.data() + m, sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  if (items_.size() < size_) items_ = gpu::DeviceBuffer<PairItem>(size_);
  if (size_ == 0) return;
  fill_kernel<<<gpu::div_up(size_, 256), 256>>>(g, m, offsets_.data(), items_.data());
  NF_CUDA_LAUNCHED();
  for (int c = 1; c <= kClasses; ++c) class_begin_[c] = size_;
  if (!classify) return;

  // Group by class with a stable radix sort over the 3 class bits.
  if (keys_.size() < size_) {
    keys_ = gpu::DeviceBuffer<std::uint8_t>(size_);
    sorted_keys_ = gpu::DeviceBuffer<std::uint8_t>(size_);
    sorted_items_ = gpu::DeviceBuffer<PairItem>(size_);
  }
  if (class_count_.size() == 0) class_count_ = gpu::DeviceBuffer<std::uint32_t>(kClasses);
  class_count_.fill(0);
  classify_kernel<<<gpu::div_up(size_, 256), 256>>>(items_.data(), size_, keys_.data(), class_count_.data());
  NF_CUDA_LAUNCHED();
  NF_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, need, keys_.data(), sorted_keys_.data(), items_.data(),
                                          sorted_items_.data(), static_cast<int>(size_), 0, 3));
  if (temp_.size() < need) temp_ = gpu::DeviceBuffer<unsigned char>(need);
  NF_CUDA(cub::DeviceRadixSort::SortPairs(temp_.data(), need, keys_.data(), sorted_keys_.data(), items_.data(),
                                          sorted_items_.data(), static_cast<int>(size_), 0, 3));
  std::uint32_t counts[kClasses];
  NF_CUDA(cudaMemcpy(counts, class_count_.data(), sizeof(counts), cudaMemcpyDeviceToHost));
  class_begin_[0] = 0;
  for (int c = 0; c < kClasses; ++c) class_begin_[c + 1] = class_begin_[c] + counts[c];
  sorted_ = true;
}

}  // namespace nf
