// The far field's M2L lists on the GPU (farfield/lists_gpu.h).
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/lists.h"
#include "farfield/lists_gpu.h"
#include "tree/adaptive.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

constexpr unsigned kThreads = 128;

// Compact id of `key` among the `m` ascending keys, or m when absent.
__device__ std::uint32_t find_key(const std::uint64_t* __restrict__ keys, std::uint32_t m, std::uint64_t key) {
  std::uint32_t lo = 0, hi = m;
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (keys[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m && keys[lo] == key ? lo : m;
}

// Box b's interaction list, a warp per box: lane j < 3^D takes the parent's neighbor j (its key
// found by binary search among the coarser level's keys) and that neighbor's children that are not
// b's own neighbors. Counted into count[b] (Fill false: the lanes' counts summed) or written from
// ids[offset[b]] (Fill true: lane j after lanes < j, an inclusive scan of the counts), so that the
// list keeps its order: parent neighbors in key-offset order, ids ascending within each. Level
// l >= 2; `coarse` is level l - 1. A thread per box had run its 27 binary searches one after
// another (dependent loads: latency bound, docs/design.md §16 "Lists per step").
template <int D, bool Fill>
__global__ void list_kernel(DeviceLevel fine, DeviceLevel coarse, int l, std::uint32_t* __restrict__ count,
                            const std::uint32_t* __restrict__ offset, std::uint32_t* __restrict__ ids) {
  const std::uint64_t w = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x % 32);
  if (w >= fine.boxes) return;  // the whole warp
  const auto b = std::uint32_t(w);
  if (fine.flags && !(fine.flags[b] & adaptive::kTarget)) {  // an adaptive tree's box that takes no M2L
    if (!Fill && lane == 0) count[b] = 0;
    return;
  }
  std::uint32_t c[D];
  morton_coords<D>(fine.key[b], c);
  constexpr int kNeighbors = D == 2 ? 9 : 27;
  std::uint32_t begin = 0, end = 0;  // lane's neighbor's children in the fine level
  if (lane < kNeighbors) {
    const std::int64_t side = std::int64_t(1) << (l - 1);  // boxes per axis at level l - 1
    std::uint32_t q[D];
    bool inside = true;
    for (int a = 0, r = lane; a < D; ++a, r /= 3) {
      const std::int64_t v = std::int64_t(c[a] >> 1) + (r % 3) - 1;
      inside = inside && v >= 0 && v < side;
      q[a] = std::uint32_t(v);
    }
    if (inside) {
      const std::uint32_t qi = find_key(coarse.key, coarse.boxes, morton_key<D>(q));
      if (qi != coarse.boxes) begin = coarse.child[qi], end = coarse.child[qi + 1];
    }
  }
  auto far = [&](std::uint32_t s) {  // child s of the lane's neighbor is not adjacent to b
    std::uint32_t sc[D];
    morton_coords<D>(fine.key[s], sc);
    bool adjacent = true;
    for (int a = 0; a < D; ++a) adjacent = adjacent && (sc[a] + 1 >= c[a]) && (sc[a] <= c[a] + 1);
    return !adjacent;
  };
  std::uint32_t n = 0;
  for (std::uint32_t s = begin; s < end; ++s) n += far(s) ? 1 : 0;
  std::uint32_t upto = n;  // inclusive scan over the lanes
  for (int d = 1; d < 32; d *= 2) {
    const std::uint32_t v = __shfl_up_sync(0xffffffffu, upto, d);
    if (lane >= d) upto += v;
  }
  if (!Fill) {
    if (lane == 31) count[b] = upto;
    return;
  }
  std::uint32_t* out = ids + offset[b] + (upto - n);
  for (std::uint32_t s = begin; s < end; ++s)
    if (far(s)) *out++ = s;
}

// The sum of count[0..m) in 64 bits into *total (zeroed before): the 32-bit scan below would wrap
// without a word.
__global__ void total_kernel(const std::uint32_t* __restrict__ count, std::uint32_t m,
                             unsigned long long* __restrict__ total) {
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long sum = Reduce(storage).Sum(b < m ? count[b] : 0ull);
  if (threadIdx.x == 0) atomicAdd(total, sum);
}

// Blocks of kThreads for a warp per box.
unsigned warp_blocks(std::uint32_t boxes) { return gpu::blocks_for(std::uint64_t(boxes) * 32, kThreads); }

// count[b] into offset[b + 1] (offset[0] = 0) and their 64-bit total into *total (zeroed before).
template <int D>
void count_level(const DeviceLevel& fine, const DeviceLevel& coarse, int l, std::uint32_t* offset,
                 unsigned long long* total) {
  const std::uint32_t m = fine.boxes;
  NF_CUDA(cudaMemsetAsync(offset, 0, sizeof(std::uint32_t)));
  list_kernel<D, false><<<warp_blocks(m), kThreads>>>(fine, coarse, l, offset + 1, nullptr, nullptr);
  NF_CUDA(cudaGetLastError());
  total_kernel<<<gpu::blocks_for(m, kThreads), kThreads>>>(offset + 1, m, total);
  NF_CUDA(cudaGetLastError());
}

// An inclusive scan of offset[1..m], then the ids (links of them, checked).
template <int D>
void fill_level(const DeviceLevel& fine, const DeviceLevel& coarse, int l, gpu::DeviceBuffer<std::uint32_t>& offset,
                gpu::DeviceBuffer<std::uint32_t>& ids, gpu::Workspace& temp, std::uint32_t links) {
  const std::uint32_t m = fine.boxes;
  std::size_t bytes = 0;
  NF_CUDA(cub::DeviceScan::InclusiveSum(nullptr, bytes, offset.data() + 1, offset.data() + 1, m));
  NF_CUDA(cub::DeviceScan::InclusiveSum(temp.get(bytes), bytes, offset.data() + 1, offset.data() + 1, m));
  if (ids.size() < links) ids = gpu::DeviceBuffer<std::uint32_t>(std::size_t(links) + links / 4);
  if (links == 0) return;
  list_kernel<D, true><<<warp_blocks(m), kThreads>>>(fine, coarse, l, nullptr, offset.data(), ids.data());
  NF_CUDA(cudaGetLastError());
}

}  // namespace

std::uint64_t DeviceLists::links() const {
  std::uint64_t total = 0;
  for (const DeviceList& l : level) total += l.links;
  return total;
}

void DeviceLists::build(const DeviceLevels& t) {
  const std::size_t levels = t.level.size();
  level.assign(levels, DeviceList{});
  if (store_.size() < levels) store_.resize(levels);
  if (totals_.size() < levels) totals_ = gpu::DeviceBuffer<unsigned long long>(levels);
  NF_CUDA(cudaMemsetAsync(totals_.data(), 0, levels * sizeof(unsigned long long)));
  // Every level's counts and 64-bit total first, read back in one copy (one wait per build, not
  // one a level); a level past the 32-bit offsets is refused before any list is filled
  // (farfield::check_list_entries).
  for (std::size_t l = 2; l < levels; ++l) {
    const DeviceLevel& fine = t.level[l];
    Storage& s = store_[l];
    if (s.offset.size() < std::size_t(fine.boxes) + 1) s.offset = gpu::DeviceBuffer<std::uint32_t>(std::size_t(fine.boxes) + 1);
    level[l].offset = s.offset.data();
    if (fine.boxes == 0) {
      NF_CUDA(cudaMemsetAsync(s.offset.data(), 0, sizeof(std::uint32_t)));
      continue;
    }
    gpu::dispatch_dim(t.dim, [&](auto d) {
      count_level<decltype(d)::value>(fine, t.level[l - 1], int(l), s.offset.data(), totals_.data() + l);
    });
  }
  std::vector<unsigned long long> entries(levels, 0);
  if (levels > 2) gpu::copy_to_host(entries.data() + 2, totals_.data() + 2, (levels - 2) * sizeof(unsigned long long));
  for (std::size_t l = 2; l < levels; ++l) check_list_entries(entries[l], int(l));
  for (std::size_t l = 2; l < levels; ++l) {
    const DeviceLevel& fine = t.level[l];
    if (fine.boxes == 0) continue;
    Storage& s = store_[l];
    DeviceList& out = level[l];
    out.links = static_cast<std::uint32_t>(entries[l]);
    gpu::dispatch_dim(t.dim, [&](auto d) {
      fill_level<decltype(d)::value>(fine, t.level[l - 1], int(l), s.offset, s.ids, temp_, out.links);
    });
    out.ids = s.ids.data();
  }
}

}  // namespace nf::farfield
