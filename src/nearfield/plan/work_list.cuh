#pragma once
// The plan machinery of the kernels that cut the near field into work (nearfield/*.cu): work items
// derived from the boxes of a tree, built on the GPU in one pattern:
//   per-box counts -> exclusive scan (each box's first item) -> the host reads the total ->
//   item-major fill -> optionally a stable sort by class, with the class offsets brought to the
//   host.
// A planner (a small struct of __device__ functions, passed by value) says how many items each box
// has (count(k)), and what item `local` of the `count` items of box k is and its class
// (item(k, local, count, klass)); a count may be 64-bit: the list indexes its items in 32 bits
// (and CUB's sort takes an int count), and a plan of more than kMaxItems is refused when its total
// is read (a box of tens of millions of particles cut into chunk pairs), never wrapped around. The fill is parallel over items
// (each finds its box by binary search over the offsets), so a giant box with thousands of items
// is no serial bottleneck. Buffers only grow: planning again (a simulation plans every step)
// allocates nothing once the sizes settle.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "core/cuda_check.cuh"
#include "core/gpu_runtime.h"
#include "core/launch.cuh"

namespace nf::plan {

//! Most classes a list sorts by (8 bits of key).
constexpr int kMaxClasses = 64;
//! Most items of a list: 32-bit indices, and the class sort's count is an int.
constexpr unsigned long long kMaxItems = 0x7fffffffull;

namespace detail {

constexpr int kCountThreads = 256;

// Each box's count (clamped to 32 bits: a clamped count makes the exact total below too large),
// and the exact total in 64 bits, summed per block into `total` (zeroed before).
template <class Planner>
__global__ void __launch_bounds__(kCountThreads)
    count_kernel(Planner p, std::uint32_t boxes, std::uint32_t* counts, unsigned long long* total) {
  using Reduce = cub::BlockReduce<unsigned long long, kCountThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long c = 0;
  if (k < boxes) {
    c = p.count(k);
    counts[k] = c > 0xffffffffull ? 0xffffffffu : static_cast<std::uint32_t>(c);
  }
  if (k == boxes) counts[boxes] = 0;  // the scan's last entry becomes the total
  const unsigned long long sum = Reduce(temp).Sum(c);
  if (threadIdx.x == 0 && sum) atomicAdd(total, sum);
}

// Item `it`: its box by binary search over the offsets, then the planner's item; with classes, its
// key and a per-block histogram of the classes.
template <class Planner, class Item>
__global__ void fill_kernel(Planner p, std::uint32_t boxes, const std::uint32_t* offsets, std::uint32_t total,
                            Item* items, std::uint8_t* keys, std::uint32_t* class_count, int classes) {
  __shared__ std::uint32_t local[kMaxClasses];
  if (keys) {
    for (int c = threadIdx.x; c < classes; c += blockDim.x) local[c] = 0;
    __syncthreads();
  }
  const std::uint32_t it = blockIdx.x * blockDim.x + threadIdx.x;
  if (it < total) {
    std::uint32_t lo = 0, hi = boxes;  // the last box k with offsets[k] <= it
    while (hi - lo > 1) {
      const std::uint32_t mid = (lo + hi) / 2;
      if (offsets[mid] <= it) lo = mid;
      else hi = mid;
    }
    std::uint32_t c = 0;
    items[it] = p.item(lo, it - offsets[lo], offsets[lo + 1] - offsets[lo], c);
    if (keys) {
      keys[it] = static_cast<std::uint8_t>(c);
      atomicAdd(&local[c], 1u);
    }
  }
  if (keys) {
    __syncthreads();
    for (int c = threadIdx.x; c < classes; c += blockDim.x)
      if (local[c]) atomicAdd(&class_count[c], local[c]);
  }
}

}  // namespace detail

//! Makes b hold at least n elements, an eighth more when it grows: a plan rebuilt every step of a
//! simulation sees its sizes creep up as particles move, and each reallocation frees the old
//! buffer, which waits for the device (measured: n3-rotate's plan at 8.4M particles took 0.12 to
//! 4.1 ms a step, median 0.58, with exact-size growth).
template <class U>
void reserve(gpu::DeviceBuffer<U>& b, std::size_t n) {
  if (b.size() < n) b = gpu::DeviceBuffer<U>(n + n / 8 + 1);
}

//! Per-box counts scanned into offsets: box k owns [offset(k), offset(k + 1)) of total().
//! Buffers only grow. A plan of several lists queues every list's counts first and reads the
//! totals after: the first read waits for the device once, and the others find it idle (each
//! read that waits cost a simulation step 20 to 30 us of an idle GPU).
class BoxOffsets {
 public:
  //! The counts and their scan, queued on the device: offsets() is valid on the device at once,
  //! total() after read_total().
  template <class Planner>
  void count(const Planner& p, std::uint32_t boxes) {
    boxes_ = boxes;
    total_ = 0;
    reserve(offsets_, std::size_t(boxes) + 1);
    if (exact_total_.size() == 0) exact_total_ = gpu::DeviceBuffer<unsigned long long>(1);
    NF_CUDA(cudaMemsetAsync(exact_total_.data(), 0, sizeof(unsigned long long)));
    detail::count_kernel<<<gpu::blocks_for(std::uint64_t(boxes) + 1, detail::kCountThreads), detail::kCountThreads>>>(
        p, boxes, offsets_.data(), exact_total_.data());
    NF_CUDA_LAUNCHED();
    std::size_t need = 0;
    NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, need, offsets_.data(), offsets_.data(), static_cast<int>(boxes + 1)));
    NF_CUDA(cub::DeviceScan::ExclusiveSum(scratch(need), need, offsets_.data(), offsets_.data(),
                                          static_cast<int>(boxes + 1)));
  }
  //! Brings the total of the last count() to the host (waits for the device). Throws
  //! std::length_error, naming the total, above kMaxItems (the scanned 32-bit offsets would have
  //! wrapped around past 2^32 - 1, the sort's int count past 2^31 - 1): nothing of the list is
  //! filled then.
  void read_total() {
    unsigned long long exact = 0;
    NF_CUDA(cudaMemcpy(&exact, exact_total_.data(), sizeof(exact), cudaMemcpyDeviceToHost));
    if (exact > kMaxItems)
      throw std::length_error("near-field plan: " + std::to_string(exact) + " work items, more than the " +
                              std::to_string(kMaxItems) +
                              " its lists take (32-bit counts: a box holds too many particles for this "
                              "kernel's plan; take a deeper --level, or a kernel without a plan such as "
                              "ppt or bpb)");
    total_ = static_cast<std::uint32_t>(exact);
  }
  //! boxes + 1 offsets on the device (valid after build).
  const std::uint32_t* offsets() const { return offsets_.data(); }
  std::uint32_t boxes() const { return boxes_; }
  std::uint32_t total() const { return total_; }

 protected:
  //! CUB's temporary storage, grown on demand.
  void* scratch(std::size_t bytes) {
    reserve(temp_, bytes);
    return temp_.data();
  }

 private:
  gpu::DeviceBuffer<std::uint32_t> offsets_;
  gpu::DeviceBuffer<unsigned long long> exact_total_;  // the counts' sum in 64 bits
  gpu::DeviceBuffer<unsigned char> temp_;
  std::uint32_t boxes_ = 0, total_ = 0;
};

//! The items of a tree's boxes, grouped by class (see the top of this file).
template <class Item>
class WorkList : public BoxOffsets {
 public:
  //! The items of boxes [0, boxes) from planner p, in three steps: count (queued on the device),
  //! read_total (the host waits), fill with the same planner. Box k has p.count(k) items, item
  //! `local` of them p.item(k, local, count, klass), which with classes > 1 sets klass in
  //! [0, classes): the items then come out sorted by class, stably (within a class in box order),
  //! with class_begin(c) on the host.
  template <class Planner>
  void count(const Planner& p, std::uint32_t boxes, int classes = 1) {
    if (classes < 1 || classes > kMaxClasses) throw std::logic_error("WorkList: 1..64 classes");
    classes_ = classes;
    sorted_ = false;
    BoxOffsets::count(p, boxes);
  }
  template <class Planner>
  void fill(const Planner& p) {
    const int classes = classes_;
    const std::uint32_t boxes = this->boxes();
    class_begin_.assign(std::size_t(classes) + 1, 0);
    const std::uint32_t n = total();
    for (int c = 1; c <= classes; ++c) class_begin_[c] = n;
    if (n == 0) return;
    grow(items_, n);
    const bool classify = classes > 1;
    if (classify) {
      grow(keys_, n);
      grow(sorted_keys_, n);
      grow(sorted_items_, n);
      grow(class_count_, kMaxClasses);
      class_count_.fill(0);
    }
    detail::fill_kernel<<<gpu::blocks_for(n, 256), 256>>>(p, boxes, offsets(), n, items_.data(),
                                                          classify ? keys_.data() : nullptr, class_count_.data(),
                                                          classes);
    NF_CUDA_LAUNCHED();
    if (!classify) return;
    int bits = 1;
    while ((1 << bits) < classes) ++bits;
    std::size_t need = 0;
    NF_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, need, keys_.data(), sorted_keys_.data(), items_.data(),
                                            sorted_items_.data(), static_cast<int>(n), 0, bits));
    NF_CUDA(cub::DeviceRadixSort::SortPairs(scratch(need), need, keys_.data(), sorted_keys_.data(), items_.data(),
                                            sorted_items_.data(), static_cast<int>(n), 0, bits));
    std::vector<std::uint32_t> counts(classes);
    NF_CUDA(cudaMemcpy(counts.data(), class_count_.data(), classes * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    for (int c = 0; c < classes; ++c) class_begin_[c + 1] = class_begin_[c] + counts[c];
    sorted_ = true;
  }
  //! The items, class by class (valid after build).
  const Item* items() const { return sorted_ ? sorted_items_.data() : items_.data(); }
  std::uint32_t size() const { return total(); }
  //! First item of class c (c = classes: the end).
  std::uint32_t class_begin(int c) const { return class_begin_[c]; }
  std::uint32_t class_size(int c) const { return class_begin_[c + 1] - class_begin_[c]; }
  int classes() const { return classes_; }

 private:
  template <class U>
  static void grow(gpu::DeviceBuffer<U>& b, std::size_t n) {
    reserve(b, n);
  }
  gpu::DeviceBuffer<Item> items_, sorted_items_;
  gpu::DeviceBuffer<std::uint8_t> keys_, sorted_keys_;
  gpu::DeviceBuffer<std::uint32_t> class_count_;
  std::vector<std::uint32_t> class_begin_ = {0, 0};
  int classes_ = 1;
  bool sorted_ = false;
};

}  // namespace nf::plan
