// GPU tree builder, stage "neighbors": the compact lists. One thread per non-empty box looks its
// 3^D - 1 neighbor keys up among the sorted non-empty keys (compact_neighbors, shared with the
// CPU builder), first to count, then, once the scans have given the offsets and the host has
// sized the id buffers, to fill.
#include "tree/tree_gpu_lists.cuh"

namespace nf::tree_gpu {
namespace {

// Capacity for `need` entries, with headroom so that rebuilds of moving particles rarely
// reallocate.
void reserve(gpu::DeviceBuffer<std::uint32_t>& b, std::uint32_t need) {
  if (b.size() < need || b.size() == 0) b = gpu::DeviceBuffer<std::uint32_t>(std::size_t(need) + need / 8 + 1);
}

}  // namespace

std::size_t neighbors_temp_bytes(std::size_t boxes) { return scan_temp_bytes(std::uint64_t(boxes) + 1); }

void build_compact_lists(DeviceTree& t, Scratch& s) {
  const std::uint32_t m = t.nonempty_count;
  gpu::dispatch_dim(t.dim, [&](auto dim) {
    const CompactNeighbors<decltype(dim)::value> source{t.box_key.data(), m, t.level};
    count_neighbors(source, m, s, t.near_full_offset.data(), t.near_half_offset.data());
    // The totals size the id buffers: one small synchronous read each.
    gpu::copy_to_host(&t.near_full_links, t.near_full_offset.data() + m, sizeof(std::uint32_t));
    gpu::copy_to_host(&t.near_half_links, t.near_half_offset.data() + m, sizeof(std::uint32_t));
    reserve(t.near_full_ids, t.near_full_links);
    reserve(t.near_half_ids, t.near_half_links);
    fill_neighbors(source, m, t.near_full_offset.data(), t.near_half_offset.data(), t.near_full_ids.data(),
                   t.near_half_ids.data());
  });
}

}  // namespace nf::tree_gpu
