// GPU tree builder, stage "dense": the paper's arrays over all 4^K / 8^K boxes, derived from the
// compact ones (boxIdx, the per-particle box index, the non-empty list) plus the dense neighbor
// lists of every box (which depend on the level only).
#include <stdexcept>

#include "tree/tree_gpu_lists.cuh"

namespace nf::tree_gpu {
namespace {

struct DensePolicy {
  static constexpr unsigned threads = 256;
};

// particle_box[s] = the sorted key (32 bits at dense levels: narrow_keys); nonempty[k] = box_key[k].
__global__ void dense_ids_kernel(const std::uint32_t* __restrict__ sorted_keys, std::uint32_t n,
                                 const std::uint64_t* __restrict__ box_key, std::uint32_t boxes,
                                 std::uint32_t* __restrict__ particle_box, std::uint32_t* __restrict__ nonempty) {
  const std::uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < n) particle_box[s] = sorted_keys[s];
  if (s < boxes) nonempty[s] = static_cast<std::uint32_t>(box_key[s]);
}

// box_start[b] = first sorted particle whose key is >= b, for b in [0, nbox]: one thread per box
// (a binary search among the non-empty keys), so long runs of empty boxes cost no single thread.
__global__ void box_start_kernel(const std::uint64_t* __restrict__ box_key, const std::uint32_t* __restrict__ box_first,
                                 std::uint32_t boxes, std::uint32_t nbox, std::uint32_t* __restrict__ box_start) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > nbox) return;
  box_start[b] = box_first[lower_bound_near(box_key, boxes, 0, b)];
}

}  // namespace

std::size_t dense_temp_bytes(std::uint64_t nbox) { return scan_temp_bytes(nbox + 1); }

void build_dense(DeviceTree& t, Scratch& s) {
  const std::uint32_t nbox = static_cast<std::uint32_t>(t.nbox), m = t.nonempty_count;
  const unsigned threads = DensePolicy::threads;
  if (!narrow_keys(t.dim * t.level)) throw std::logic_error("build_dense: dense levels have keys of at most 32 bits");
  if (t.n > 0) {
    dense_ids_kernel<<<gpu::blocks_for(t.n, threads), threads>>>(key_data<std::uint32_t>(s.sorted_keys), t.n, t.box_key.data(), m,
                                                                 t.particle_box.data(), t.nonempty.data());
    NF_CUDA_LAUNCHED();
  }
  box_start_kernel<<<gpu::blocks_for(std::uint64_t(nbox) + 1, threads), threads>>>(t.box_key.data(), t.box_first.data(),
                                                                                   m, nbox, t.box_start.data());
  NF_CUDA_LAUNCHED();
  gpu::dispatch_dim(t.dim, [&](auto dim) {
    const DenseNeighbors<decltype(dim)::value> source{t.level, nbox};
    count_neighbors(source, nbox, s, t.full_offset.data(), t.half_offset.data());
    fill_neighbors(source, nbox, t.full_offset.data(), t.half_offset.data(), t.full_ids.data(), t.half_ids.data(),
                   t.full_ids.size(), t.half_ids.size());
  });
}

}  // namespace nf::tree_gpu
