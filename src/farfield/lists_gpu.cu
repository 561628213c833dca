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

// Box b's interaction list: counted into count[b] (Fill false) or written from ids[offset[b]]
// (Fill true). Level l >= 2; `coarse` is level l - 1.
template <int D, bool Fill>
__global__ void list_kernel(DeviceLevel fine, DeviceLevel coarse, int l, std::uint32_t* __restrict__ count,
                            const std::uint32_t* __restrict__ offset, std::uint32_t* __restrict__ ids) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= fine.boxes) return;
  if (fine.flags && !(fine.flags[b] & adaptive::kTarget)) {  // an adaptive tree's box that takes no M2L
    if (!Fill) count[b] = 0;
    return;
  }
  std::uint32_t c[D], pc[D];
  morton_coords<D>(fine.key[b], c);
  for (int a = 0; a < D; ++a) pc[a] = c[a] >> 1;
  const std::int64_t side = std::int64_t(1) << (l - 1);  // boxes per axis at level l - 1
  std::uint32_t n = 0;
  std::uint32_t* out = Fill ? ids + offset[b] : nullptr;
  constexpr int kNeighbors = D == 2 ? 9 : 27;
  for (int j = 0; j < kNeighbors; ++j) {
    std::uint32_t q[D];
    bool inside = true;
    int r = j;
    for (int a = 0; a < D; ++a, r /= 3) {
      const std::int64_t v = std::int64_t(pc[a]) + (r % 3) - 1;
      inside = inside && v >= 0 && v < side;
      q[a] = std::uint32_t(v);
    }
    if (!inside) continue;
    const std::uint32_t qi = find_key(coarse.key, coarse.boxes, morton_key<D>(q));
    if (qi == coarse.boxes) continue;
    for (std::uint32_t s = coarse.child[qi]; s < coarse.child[qi + 1]; ++s) {
      std::uint32_t sc[D];
      morton_coords<D>(fine.key[s], sc);
      bool adjacent = true;
      for (int a = 0; a < D; ++a) adjacent = adjacent && (sc[a] + 1 >= c[a]) && (sc[a] <= c[a] + 1);
      if (adjacent) continue;
      if (Fill) out[n] = s;
      ++n;
    }
  }
  if (!Fill) count[b] = n;
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

template <int D>
void build_level(const DeviceLevel& fine, const DeviceLevel& coarse, int l, gpu::DeviceBuffer<std::uint32_t>& offset,
                 gpu::DeviceBuffer<std::uint32_t>& ids, gpu::DeviceBuffer<unsigned long long>& total,
                 gpu::Workspace& temp, std::uint32_t& links) {
  const std::uint32_t m = fine.boxes;
  // count[b] into offset[b + 1] (offset[0] = 0), then an inclusive scan of offset[1..m].
  NF_CUDA(cudaMemsetAsync(offset.data(), 0, sizeof(std::uint32_t)));
  list_kernel<D, false><<<gpu::blocks_for(m, kThreads), kThreads>>>(fine, coarse, l, offset.data() + 1, nullptr, nullptr);
  NF_CUDA(cudaGetLastError());
  // The total in 64 bits first (the one read-back of a level): refused where the 32-bit offsets
  // of the scan below would wrap (farfield::check_list_entries); else it is the scan's last offset.
  if (total.size() == 0) total = gpu::DeviceBuffer<unsigned long long>(1);
  NF_CUDA(cudaMemsetAsync(total.data(), 0, sizeof(unsigned long long)));
  total_kernel<<<gpu::blocks_for(m, kThreads), kThreads>>>(offset.data() + 1, m, total.data());
  NF_CUDA(cudaGetLastError());
  unsigned long long entries = 0;
  gpu::copy_to_host(&entries, total.data(), sizeof entries);
  check_list_entries(entries, l);
  links = static_cast<std::uint32_t>(entries);
  std::size_t bytes = 0;
  NF_CUDA(cub::DeviceScan::InclusiveSum(nullptr, bytes, offset.data() + 1, offset.data() + 1, m));
  NF_CUDA(cub::DeviceScan::InclusiveSum(temp.get(bytes), bytes, offset.data() + 1, offset.data() + 1, m));
  if (ids.size() < links) ids = gpu::DeviceBuffer<std::uint32_t>(std::size_t(links) + links / 4);
  if (links == 0) return;
  list_kernel<D, true><<<gpu::blocks_for(m, kThreads), kThreads>>>(fine, coarse, l, nullptr, offset.data(), ids.data());
  NF_CUDA(cudaGetLastError());
}

}  // namespace

std::uint64_t DeviceLists::links() const {
  std::uint64_t total = 0;
  for (const DeviceList& l : level) total += l.links;
  return total;
}

void DeviceLists::build(const DeviceLevels& t) {
  level.assign(t.level.size(), DeviceList{});
  if (store_.size() < t.level.size()) store_.resize(t.level.size());
  for (std::size_t l = 2; l < t.level.size(); ++l) {
    const DeviceLevel& fine = t.level[l];
    Storage& s = store_[l];
    if (s.offset.size() < std::size_t(fine.boxes) + 1) s.offset = gpu::DeviceBuffer<std::uint32_t>(std::size_t(fine.boxes) + 1);
    DeviceList& out = level[l];
    out.offset = s.offset.data();
    if (fine.boxes == 0) {
      NF_CUDA(cudaMemsetAsync(s.offset.data(), 0, sizeof(std::uint32_t)));
      continue;
    }
    gpu::dispatch_dim(t.dim, [&](auto d) {
      build_level<decltype(d)::value>(fine, t.level[l - 1], int(l), s.offset, s.ids, s.total, temp_, out.links);
    });
    out.ids = s.ids.data();
  }
}

}  // namespace nf::farfield
