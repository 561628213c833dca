// GPU tree builder, stage "neighbors": the compact lists. The 3^D - 1 neighbor keys of each
// non-empty box are looked up (a lane per neighbor) in a map over all boxes when there are few
// enough boxes (MapNeighbors), else among the sorted non-empty keys (SearchNeighbors), first to
// count, then, once the scans have given the offsets, to fill. M and the totals stay on the device: the host reads them once, at the end
// of the build (read_summary), and refills only when an id buffer turned out too small.
#include "tree/tree_gpu_lists.cuh"

namespace nf::tree_gpu {
namespace {

struct MapPolicy {
  static constexpr unsigned threads = 256;
};

// map[box_key[k]] = k for the M non-empty boxes (the map was cleared to kNoBox before).
__global__ void map_kernel(const std::uint64_t* __restrict__ box_key, const std::uint32_t* __restrict__ boxes,
                           std::uint32_t capacity, std::uint32_t* __restrict__ map) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < capacity && k < *boxes) map[box_key[k]] = k;
}

// map[box_key[k]] = kNoBox again for the M non-empty boxes: M writes instead of filling all boxes.
__global__ void unmap_kernel(const std::uint64_t* __restrict__ box_key, const std::uint32_t* __restrict__ boxes,
                             std::uint32_t capacity, std::uint32_t* __restrict__ map) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < capacity && k < *boxes) map[box_key[k]] = kNoBox;
}

__global__ void summary_kernel(const std::uint32_t* __restrict__ counters, const std::uint32_t* __restrict__ full_offset,
                               const std::uint32_t* __restrict__ half_offset, const Domain* __restrict__ domain,
                               BuildSummary* __restrict__ out) {
  for (int c = 0; c < kCounters; ++c) out->counters[c] = counters[c];
  const std::uint32_t m = counters[kBoxes];
  out->counters[kFullLinks] = full_offset ? full_offset[m] : 0;  // null: a build without lists
  out->counters[kHalfLinks] = half_offset ? half_offset[m] : 0;
  out->domain = *domain;
}

// Calls f with the compact layout's neighbor source: the map when there is one, else the search.
template <int D, class F>
void with_compact_source(const DeviceTree& t, const Scratch& s, F&& f) {
  if (s.box_map.size())
    f(MapNeighbors<D>{t.box_key.data(), s.counters.data() + kBoxes, s.box_map.data(), t.level});
  else
    f(SearchNeighbors<D>{t.box_key.data(), s.counters.data() + kBoxes, t.level});
}

}  // namespace

std::size_t neighbors_temp_bytes(std::size_t boxes) { return scan_temp_bytes(std::uint64_t(boxes) + 1); }

void build_compact_lists(DeviceTree& t, Scratch& s) {
  const std::uint32_t capacity = static_cast<std::uint32_t>(t.box_key.size());
  if (s.box_map.size() && capacity > 0) {
    if (!s.map_clear) s.box_map.fill(0xFF);  // kNoBox everywhere (once: clear_map undoes a build's entries)
    s.map_clear = false;
    map_kernel<<<gpu::blocks_for(capacity, MapPolicy::threads), MapPolicy::threads>>>(
        t.box_key.data(), s.counters.data() + kBoxes, capacity, s.box_map.data());
    NF_CUDA_LAUNCHED();
  }
  gpu::dispatch_dim(t.dim, [&](auto dim) {
    with_compact_source<decltype(dim)::value>(t, s, [&](const auto& source) {
      count_neighbors(source, capacity, s, t.near_full_offset.data(), t.near_half_offset.data());
      fill_neighbors(source, capacity, t.near_full_offset.data(), t.near_half_offset.data(), t.near_full_ids.data(),
                     t.near_half_ids.data(), t.near_full_ids.size(), t.near_half_ids.size());
    });
  });
}

void refill_compact_lists(DeviceTree& t, Scratch& s) {
  // Headroom, so that rebuilds of moving particles rarely come back here.
  auto reserve = [](gpu::DeviceBuffer<std::uint32_t>& b, std::uint32_t need) {
    if (b.size() < need) b = gpu::DeviceBuffer<std::uint32_t>(std::size_t(need) + need / 8 + 1);
  };
  reserve(t.near_full_ids, t.near_full_links);
  reserve(t.near_half_ids, t.near_half_links);
  const std::uint32_t capacity = static_cast<std::uint32_t>(t.box_key.size());
  gpu::dispatch_dim(t.dim, [&](auto dim) {
    with_compact_source<decltype(dim)::value>(t, s, [&](const auto& source) {
      fill_neighbors(source, capacity, t.near_full_offset.data(), t.near_half_offset.data(), t.near_full_ids.data(),
                     t.near_half_ids.data(), t.near_full_ids.size(), t.near_half_ids.size());
    });
  });
}

void clear_map(const DeviceTree& t, Scratch& s) {
  const std::uint32_t capacity = static_cast<std::uint32_t>(t.box_key.size());
  if (!s.box_map.size() || capacity == 0) return;
  unmap_kernel<<<gpu::blocks_for(capacity, MapPolicy::threads), MapPolicy::threads>>>(
      t.box_key.data(), s.counters.data() + kBoxes, capacity, s.box_map.data());
  NF_CUDA_LAUNCHED();
  s.map_clear = true;
}

BuildSummary read_summary(Scratch& s, const DeviceTree& t) {
  summary_kernel<<<1, 1>>>(s.counters.data(), t.near_full_offset.data(), t.near_half_offset.data(), s.domain.data(),
                           s.summary.data());
  NF_CUDA_LAUNCHED();
  BuildSummary out;
  gpu::copy_to_host(&out, s.summary.data(), sizeof out);
  return out;
}

}  // namespace nf::tree_gpu
