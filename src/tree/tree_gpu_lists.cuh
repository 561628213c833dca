#pragma once
// CSR neighbor lists on the GPU, written once for the compact and the dense layout: a first pass
// counts each box's neighbors (full, and those with a larger id), exclusive scans over capacity
// + 1 entries give the offsets (offset[count] = the total), and a second pass fills the ids,
// ascending. A `Source` says how many boxes there are (`count()`, read on the device), a box's
// key (`key(b)`) and the id of a neighbor's key (`id(key, b)`: kNoBox when that box is empty); a
// lane per neighbor does the rest.
#include <algorithm>

#include <cub/device/device_scan.cuh>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/neighbors.h"
#include "tree/tree_gpu_stages.h"

namespace nf::tree_gpu {

struct ListsPolicy {
  static constexpr unsigned threads = 128;
};

// Every source runs grouped: a box's 3^D - 1 neighbor offsets go to one lane each (8 lanes a
// box in 2D, a warp in 3D with 26 lanes busy), each lane builds its own neighbor key and looks
// it up (id(key, box)), and the lanes rank their ids with shuffles to write them ascending. A
// thread per box had to build and insertion-sort 26 keys in local memory (docs/design.md §12,
// "The step on the GPU").

//! Compact layout without a map (more than kMapBoxes boxes, or more than kMapBoxesPerParticle a
//! particle): a neighbor's compact id is found by a search among the non-empty keys, galloping
//! out from its box's own id.
template <int D>
struct SearchNeighbors {
  static constexpr int dim = D;
  const std::uint64_t* box_key;
  const std::uint32_t* boxes;  //!< M, on the device
  int level;
  __device__ std::uint32_t count() const { return *boxes; }
  __device__ std::uint64_t key(std::uint32_t k) const { return box_key[k]; }
  __device__ std::uint32_t id(std::uint64_t key, std::uint32_t k) const {
    const std::uint32_t m = *boxes, at = lower_bound_near(box_key, m, k, key);
    return at < m && box_key[at] == key ? at : kNoBox;
  }
};

//! Compact layout with a map over all boxes (box key -> compact id, or kNoBox): one load a
//! neighbor.
template <int D>
struct MapNeighbors {
  static constexpr int dim = D;
  const std::uint64_t* box_key;
  const std::uint32_t* boxes;  //!< M, on the device
  const std::uint32_t* map;
  int level;
  __device__ std::uint32_t count() const { return *boxes; }
  __device__ std::uint64_t key(std::uint32_t k) const { return box_key[k]; }
  __device__ std::uint32_t id(std::uint64_t key, std::uint32_t) const { return map[key]; }
};

//! Dense layout: every box is its own key and id.
template <int D>
struct DenseNeighbors {
  static constexpr int dim = D;
  int level;
  std::uint32_t nbox;
  __device__ std::uint32_t count() const { return nbox; }
  __device__ std::uint64_t key(std::uint32_t b) const { return b; }
  __device__ std::uint32_t id(std::uint64_t key, std::uint32_t) const { return static_cast<std::uint32_t>(key); }
};

//! Lanes a box: a power of two >= 3^D - 1.
template <int D>
__host__ __device__ constexpr unsigned group_lanes() {
  return D == 2 ? 8u : 32u;
}

//! The key of the box one step along axis `a` (dir = +1 or -1) from `key` at `level`, by
//! arithmetic on the axis's bits in place (a "dilated" add: the other axes' bits are set to carry
//! through, or cleared to borrow through); `outside` is set past the domain's edge. Cheaper than
//! decoding the key into coordinates and encoding them again (a third of the lists' time).
//! Keys of at most 32 bits (dim x level) step in 32-bit words: half the integer work.
template <int D, class K>
__device__ K step_key(K key, int a, int dir, int level, bool& outside) {
  constexpr K every = D == 2 ? K(0x5555555555555555ull) : K(0x1249249249249249ull);
  const K used = D * level >= int(8 * sizeof(K)) ? ~K(0) : (K(1) << (D * level)) - 1;
  const K mask = (every << a) & used, bit = K(1) << a;
  const K part = key & mask;
  K moved;
  if (dir > 0) {
    outside = outside || part == mask;
    moved = ((part | ~mask) + bit) & mask;
  } else {
    outside = outside || part == 0;
    moved = (part - bit) & mask;
  }
  return (key & ~mask) | moved;
}

//! Lane j's neighbor key of `key` (offset j of the 3^D - 1, the box itself skipped); `outside`
//! is set when it lies past the domain's edge.
template <int D, class K>
__device__ K neighbor_key(K key, unsigned j, int level, bool& outside) {
  const unsigned o = j < max_neighbors(D) / 2 ? j : j + 1;  // skip the centre, offset (0, 0, 0)
  const int off[3] = {int(o % 3) - 1, int(o / 3 % 3) - 1, int(o / 9) - 1};
  for (int a = 0; a < D; ++a)
    if (off[a] != 0) key = step_key<D>(key, a, off[a], level, outside);
  return key;
}

//! Lane j's neighbor of box b, as an id of the source, or kNoBox when j is past the neighbor
//! count, the neighbor lies outside the domain or (compact layout) is empty.
template <int D, class Source>
__device__ std::uint32_t group_neighbor(const Source& source, std::uint32_t b, unsigned j) {
  if (j >= unsigned(max_neighbors(D))) return kNoBox;
  const std::uint64_t key = source.key(b);
  bool outside = false;
  const std::uint64_t nk = D * source.level <= 32
                               ? neighbor_key<D>(static_cast<std::uint32_t>(key), j, source.level, outside)
                               : neighbor_key<D>(key, j, source.level, outside);
  return outside ? kNoBox : source.id(nk, b);
}

//! One lane's view of its group: its box, its neighbor id (kNoBox: none) and the group's bits of
//! the warp's ballots. Every lane of the warp must construct it (full-mask ballots).
template <int D, class Source>
struct GroupLane {
  static constexpr unsigned L = group_lanes<D>();
  std::uint32_t box, id;
  unsigned valid, larger;  //!< the group's lanes (bit 0 = its first) holding a neighbor / one above box
  __device__ GroupLane(const Source& source, std::uint32_t b, std::uint32_t boxes) : box(b) {
    const unsigned lane = threadIdx.x & 31u, base = lane & ~(L - 1), keep = L == 32 ? 0xFFFFFFFFu : (1u << L) - 1;
    id = box < boxes ? group_neighbor<D>(source, box, lane % L) : kNoBox;
    valid = (__ballot_sync(0xFFFFFFFFu, id != kNoBox) >> base) & keep;
    larger = (__ballot_sync(0xFFFFFFFFu, id != kNoBox && id > box) >> base) & keep;
  }
};

//! The list kernels' loop: a fixed grid of warps strides over the boxes, 32 / L boxes a warp at a
//! time (the loop bound is the same for every lane of a warp), so M read on the device sets the
//! work and the capacity only the scans' length.
template <int D, class F>
__device__ void for_each_group(std::uint32_t boxes, F&& f) {
  constexpr unsigned per_warp = 32 / group_lanes<D>();
  const std::uint64_t warps = std::uint64_t(gridDim.x) * blockDim.x / 32;
  for (std::uint64_t w = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w * per_warp < boxes; w += warps)
    f(static_cast<std::uint32_t>(w * per_warp + (threadIdx.x & 31u) / group_lanes<D>()));
}

//! Grid of the list kernels: enough warps to fill the GPU, no more than the boxes need.
template <int D>
unsigned group_grid(std::uint32_t capacity, unsigned threads) {
  // 8192 blocks: the lists of 3D Plummer 2M (level 8) and 3D uniform 8M (level 6) took 10% less
  // time than with 2048 blocks (H100), and 4 or 32 times more blocks gained nothing.
  return std::min(gpu::blocks_for((std::uint64_t(capacity) + 1) * group_lanes<D>(), threads), 8192u);
}

template <int D, class Source>
__global__ void group_count_kernel(Source source, std::uint32_t capacity, std::uint32_t* __restrict__ full_count,
                                   std::uint32_t* __restrict__ half_count) {
  const std::uint32_t boxes = min(source.count(), capacity);
  // Entries past the boxes count nothing (the scans run over capacity + 1 entries).
  for (std::uint64_t e = boxes + std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; e <= capacity;
       e += std::uint64_t(gridDim.x) * blockDim.x)
    full_count[e] = half_count[e] = 0;
  for_each_group<D>(boxes, [&](std::uint32_t b) {
    const GroupLane<D, Source> g(source, b, boxes);
    if (threadIdx.x % g.L == 0 && b < boxes) {
      full_count[b] = __popc(g.valid);
      half_count[b] = __popc(g.larger);
    }
  });
}

template <int D, class Source>
__global__ void group_fill_kernel(Source source, const std::uint32_t* __restrict__ full_offset,
                                  const std::uint32_t* __restrict__ half_offset, std::uint32_t* __restrict__ full_ids,
                                  std::uint32_t* __restrict__ half_ids, std::size_t full_cap, std::size_t half_cap) {
  const std::uint32_t boxes = source.count();
  for_each_group<D>(boxes, [&](std::uint32_t b) {
    const GroupLane<D, Source> g(source, b, boxes);
    // The lane's rank among its group's ids (distinct; kNoBox is above them all): a warp of one
    // group (3D) compares with its valid lanes only (the mask is the same in every lane), a warp
    // of 4 groups (2D) with all 8 lanes of its group.
    unsigned rank = 0;
    if constexpr (GroupLane<D, Source>::L == 32) {
      for (unsigned m = g.valid; m; m &= m - 1) rank += __shfl_sync(0xFFFFFFFFu, g.id, __ffs(m) - 1) < g.id;
    } else {
      for (unsigned r = 0; r < g.L; ++r) rank += __shfl_sync(0xFFFFFFFFu, g.id, r, g.L) < g.id;
    }
    if (g.id == kNoBox) return;
    const std::size_t f = std::size_t(full_offset[b]) + rank;
    if (f < full_cap) full_ids[f] = g.id;
    if (g.id > b) {
      const std::size_t h = std::size_t(half_offset[b]) + rank - __popc(g.valid & ~g.larger);
      if (h < half_cap) half_ids[h] = g.id;
    }
  });
}

//! CUB temporary bytes of an exclusive scan over `items` counts.
inline std::size_t scan_temp_bytes(std::uint64_t items) {
  std::size_t bytes = 0;
  NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<std::uint32_t*>(nullptr),
                                        static_cast<std::uint32_t*>(nullptr), static_cast<int>(items)));
  return bytes;
}

//! Counts (into s.full_count / s.half_count) and scans them into the offsets (capacity + 1
//! each; source.count() <= capacity boxes have lists, offset[count()] onwards is the total).
template <class Source>
void count_neighbors(const Source& source, std::uint32_t capacity, Scratch& s, std::uint32_t* full_offset,
                     std::uint32_t* half_offset) {
  const unsigned threads = ListsPolicy::threads;
  const std::uint32_t boxes = capacity;
  constexpr int D = Source::dim;
  group_count_kernel<D><<<group_grid<D>(boxes, threads), threads>>>(source, boxes, s.full_count.data(),
                                                                    s.half_count.data());
  NF_CUDA_LAUNCHED();
  auto scan = [&](const std::uint32_t* count, std::uint32_t* offset) {
    std::size_t bytes = s.temp.size();
    NF_CUDA(cub::DeviceScan::ExclusiveSum(s.temp.data(), bytes, count, offset, static_cast<int>(boxes + 1)));
  };
  scan(s.full_count.data(), full_offset);
  scan(s.half_count.data(), half_offset);
}

//! Writes the ids at the offsets count_neighbors produced, at most full_cap / half_cap of each.
template <class Source>
void fill_neighbors(const Source& source, std::uint32_t capacity, const std::uint32_t* full_offset,
                    const std::uint32_t* half_offset, std::uint32_t* full_ids, std::uint32_t* half_ids,
                    std::size_t full_cap, std::size_t half_cap) {
  if (capacity == 0) return;
  const unsigned threads = ListsPolicy::threads;
  constexpr int D = Source::dim;
  group_fill_kernel<D><<<group_grid<D>(capacity, threads), threads>>>(source, full_offset, half_offset, full_ids,
                                                                      half_ids, full_cap, half_cap);
  NF_CUDA_LAUNCHED();
}

}  // namespace nf::tree_gpu
