#include "nearfield/pair_items.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"

namespace nf {
namespace {

//! A run of particles [first, end) to cut into chunks: one box, or a group of neighbor boxes.
struct Run {
  std::uint32_t first, end;
  bool small;
  __device__ std::uint32_t size() const { return end - first; }
};

struct BoxGraph {
  const std::uint32_t *box_start, *half_offset, *half_ids;  // compact: box k is [box_start[k], box_start[k+1])
  std::uint32_t chunk;                                      // 32 times a power of two
  const std::uint8_t* small;  // null: every box big
  __device__ bool is_small(std::uint32_t box) const { return small && small[box]; }
  __device__ Run box_run(std::uint32_t b) const { return {box_start[b], box_start[b + 1], is_small(b)}; }

  // A run of n particles is cut into full chunks of `chunk` and its rest r: one chunk when r fills
  // a power of two of warps (32 2^k targets, the lanes of class k), else two, the largest such
  // 32 2^k below r and what is left. A rest of 300 becomes 256 + 44 (lanes for 256 + 64 targets,
  // 94% busy) instead of one chunk in the 512-target class (59%): on 2D clusters at level 10 the
  // lanes' use went from 72% to 88% (counted from the tree).
  __device__ static std::uint32_t head(std::uint32_t r) {
    const std::uint32_t warps = (r + 31) / 32, p = 1u << (31 - __clz(warps));
    return p == warps ? r : 32 * p;
  }
  __device__ std::uint32_t chunks(const Run& run) const {
    const std::uint32_t n = run.size(), r = n % chunk;
    return n / chunk + (r == 0 ? 0 : head(r) == r ? 1 : 2);
  }
  // Chunk ci of a run: [first, end) of the sorted particles.
  __device__ void chunk_range(const Run& run, std::uint32_t ci, std::uint32_t& first, std::uint32_t& end) const {
    const std::uint32_t n = run.size(), full = n / chunk;
    if (ci < full) {
      first = run.first + ci * chunk;
      end = first + chunk;
      return;
    }
    const std::uint32_t rest = run.first + full * chunk, h = head(n - full * chunk);
    first = ci == full ? rest : rest + h;
    end = ci == full ? rest + h : run.end;
  }

  // The half list of a box in groups: a group is a run of neighbors with consecutive compact ids
  // (their particles are contiguous), all small or all big, of at most `chunk` particles together
  // (or one neighbor alone). A group is computed as one source range, so the last batch of 32
  // sources is padded once per group rather than once per box, and there are fewer items: on
  // 2D clusters at level 11 the lanes' use went from 66% to 70% and the items from 112k to 67k
  // (counted from the tree). Returns the group starting at list entry l and sets `next`.
  __device__ Run group(std::uint32_t l, std::uint32_t stop, std::uint32_t& next) const {
    const std::uint32_t b = half_ids[l];
    Run run = box_run(b);
    next = l + 1;
    while (next < stop && half_ids[next] == half_ids[next - 1] + 1 && is_small(half_ids[next]) == run.small &&
           box_start[half_ids[next] + 1] - run.first <= chunk) {
      run.end = box_start[half_ids[next] + 1];
      ++next;
    }
    return run;
  }
  // The items of box k with a neighbor group: both big, chunks x chunks, mutual; one small, the
  // big one's chunks against the small one, one-sided; both small, none.
  __device__ std::uint32_t link_items(const Run& k, const Run& nb) const {
    if (k.small && nb.small) return 0;
    if (k.small) return chunks(nb);
    if (nb.small) return chunks(k);
    return chunks(k) * chunks(nb);
  }
  // Items of non-empty box k: chunk pairs of the box with itself (big boxes), then each group.
  __device__ std::uint32_t items_of(std::uint32_t k) const {
    const Run own = box_run(k);
    const std::uint32_t c = own.small ? 0 : chunks(own);
    std::uint32_t total = c * (c + 1) / 2;
    for (std::uint32_t l = half_offset[k], stop = half_offset[k + 1], next = 0; l < stop; l = next)
      total += link_items(own, group(l, stop, next));
    return total;
  }
  __device__ PairItem chunk_pair(const Run& a, std::uint32_t ca, const Run& b, std::uint32_t cb) const {
    PairItem it{0, 0, 0, 0, 0u};
    chunk_range(a, ca, it.a_begin, it.a_end);
    chunk_range(b, cb, it.b_begin, it.b_end);
    return it;
  }
  // Chunk ca of big run a against the whole of small run b, one-sided.
  __device__ PairItem chunk_vs_small(const Run& a, std::uint32_t ca, const Run& b) const {
    PairItem it{0, 0, b.first, b.end, 1u};
    chunk_range(a, ca, it.a_begin, it.a_end);
    return it;
  }
};

__global__ void count_kernel(BoxGraph g, std::uint32_t m, std::uint32_t* counts) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < m) counts[k] = g.items_of(k);
  if (k == m) counts[m] = 0;  // the scan's last entry becomes the total
}

// One thread per item: find its box by binary search over the offsets, then decode which chunk
// pair of which (box, neighbor group) it is. Parallel over items, so a giant box is no serial
// bottleneck.
__global__ void fill_kernel(BoxGraph g, std::uint32_t m, const std::uint32_t* offsets, PairItem* items) {
  const std::uint32_t it = blockIdx.x * blockDim.x + threadIdx.x;
  if (it >= offsets[m]) return;
  std::uint32_t lo = 0, hi = m;  // last k with offsets[k] <= it
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (offsets[mid] <= it) lo = mid;
    else hi = mid;
  }
  const Run own = g.box_run(lo);
  const std::uint32_t c = own.small ? 0 : g.chunks(own);
  std::uint32_t local = it - offsets[lo];
  const std::uint32_t self = c * (c + 1) / 2;
  if (local < self) {
    // Row ci holds the chunk pairs (ci, ci), (ci, ci + 1), ..., (ci, c - 1).
    std::uint32_t ci = 0;
    while (local >= c - ci) local -= c - ci++;
    items[it] = g.chunk_pair(own, ci, own, ci + local);
    return;
  }
  local -= self;
  for (std::uint32_t l = g.half_offset[lo], stop = g.half_offset[lo + 1], next = 0;; l = next) {
    const Run nb = g.group(l, stop, next);
    const std::uint32_t here = g.link_items(own, nb);
    if (local < here) {
      if (own.small)  // the group's chunks against this small box
        items[it] = g.chunk_vs_small(nb, local, own);
      else if (nb.small)  // this box's chunks against the small group
        items[it] = g.chunk_vs_small(own, local, nb);
      else {
        const std::uint32_t cn = g.chunks(nb);
        items[it] = g.chunk_pair(own, local / cn, nb, local % cn);
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
