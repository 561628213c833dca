// The adaptive tree's near field on the GPU (farfield/adaptive_gpu.h): its work items, planned
// with the tree, and the kernels that run them. docs/design.md §16, "Adaptive tree", says why.
//
// A leaf's near field is its T targets against the S particles of the 3^D boxes around it at its
// level (itself included), the boxes taken as one list in offset order (x fastest; cell()). Sizes
// vary wildly: a leaf of the Plummer core's edge holds a handful of particles yet sees a dense
// split box beside it, whose every particle is a source. So the unit of work is an *item*: a chunk
// of at most kChunk targets against a segment of at most kSegment (1024) of the leaf's sources, run by one
// warp. Each lane holds R = 1..4 targets (kChunk = 4 x 32); the sources pass 32 at a time through
// the warp's shared memory, read there as broadcasts. Items are bucketed by R, one launch a bucket,
// so the small chunks do not pay the registers of R = 4. A leaf whose sources fit one segment has
// each target in one item and adds with a plain store; a longer list has several items per target,
// which add with atomics.
//
// With `mutual` (the default of fmm-adaptive) the pairs of two adjacent leaves of one level, and
// of a leaf with itself, are near for both sides: those go to n3-rotate's Newton-3 kernel over
// the leaf graph planned here (plan_leaf_pairs: the leaves in particle order and their half
// lists, the layout of a compact tree), and the items keep only the kept boxes that are not
// leaves as sources, adding with atomics.
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdlib>

#include <string>

#include "core/cuda_check.cuh"
#include "core/env.h"
#include "core/errors.h"
#include "core/launch.cuh"
#include "farfield/adaptive_gpu.h"
#include "physics/interaction.h"
#include "tree/adaptive.h"
#include "tree/morton.h"
#include "tree/neighbors.h"

namespace nf::farfield {
namespace {

constexpr std::uint32_t kChunk = 128;    // targets of an item, at most
// Sources of an item, at most: 1024 (NEARFIELD_NEAR_SEGMENT sets another, 32 to 2^20, for
// comparisons). An item of 128 targets against 4096 sources, the size before, is half a million
// pairs, about a millisecond of one warp while the GPU is full; with 1024 the near field took from
// 0.3% longer to 4% less time on 3D Plummer and a shell (docs/design.md §16, "Adaptive tree";
// results/fmm-m2l-levels).
constexpr std::uint32_t kSegment = 1024;
constexpr unsigned kWarps = 4;           // items of a block
constexpr unsigned kThreads = 32 * kWarps;

// The kept levels, for one launch over all of them: box g of the concatenation is box
// g - offset[l] of level l, for offset[l] <= g < offset[l + 1].
struct NearLevels {
  int count = 0;
  std::uint64_t offset[kMaxAdaptiveLevel + 2] = {};
  DeviceLevel level[kMaxAdaptiveLevel + 1] = {};
};

// Lane k < 3^D: the kept box at offset k of box b of level l (offset (k % 3 - 1, k / 3 % 3 - 1,
// k / 9 - 1)), or kNone outside the domain or where no box is kept.
constexpr std::uint32_t kNone = ~std::uint32_t(0);
template <int D>
__device__ std::uint32_t neighbor(const DeviceLevel& lv, int l, std::uint32_t b, int k) {
  std::uint32_t c[D];
  morton_coords<D>(lv.key[b], c);
  const std::int64_t side = std::int64_t(1) << l;
  bool inside = true;
  for (int a = 0, r = k; a < D; ++a, r /= 3) {
    const std::int64_t v = std::int64_t(c[a]) + r % 3 - 1;
    inside = inside && v >= 0 && v < side;
    c[a] = std::uint32_t(v);
  }
  if (!inside) return kNone;
  const std::uint64_t key = morton_key<D>(c);
  const std::uint32_t q = lower_bound_near(lv.key, lv.boxes, b, key);
  return q < lv.boxes && lv.key[q] == key ? q : kNone;
}

// The one-sided sources of that box: its particles [from, from + size), none where no box is kept
// or, with `mutual` (the leaves' mutual pairs planned apart), where the box is a leaf (the target
// box itself included).
template <int D>
__device__ void cell(const DeviceLevel& lv, int l, std::uint32_t b, int k, bool mutual, std::uint32_t& from,
                     std::uint32_t& size) {
  const std::uint32_t q = neighbor<D>(lv, l, b, k);
  from = size = 0;
  if (q == kNone || (mutual && adaptive::leaf(lv.flags[q]))) return;
  from = lv.first[q], size = lv.last[q] - lv.first[q];
}

// The leaf whose particles start at `first` (leaf_first holds the leaves' starts, ascending).
__device__ std::uint32_t leaf_id(const std::uint32_t* leaf_first, std::uint32_t leaves, std::uint32_t first) {
  std::uint32_t lo = 0, hi = leaves;
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (leaf_first[mid] < first) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Whether sorted particle i starts a leaf (its leaf differs from particle i - 1's).
struct LeafStart {
  const std::uint32_t* box;
  const std::uint8_t* level;
  __device__ bool operator()(std::uint32_t i) const { return i == 0 || box[i] != box[i - 1] || level[i] != level[i - 1]; }
};

// A warp per kept box of level l that is a non-empty leaf: its half list of mutual pairs, the
// adjacent non-empty leaves of its level after it (their ids are larger: same-level boxes are in
// particle order). Without `offset` it counts them into count[its leaf id]; with it, writes their
// leaf ids ascending from ids + offset[its leaf id].
template <int D>
__global__ void half_kernel(DeviceLevel lv, int l, const std::uint32_t* __restrict__ leaf_first, std::uint32_t leaves,
                            std::uint32_t* __restrict__ count, const std::uint32_t* __restrict__ offset,
                            std::uint32_t* __restrict__ ids) {
  constexpr int kCells = D == 2 ? 9 : 27;
  const std::uint64_t b = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (b >= lv.boxes || !adaptive::leaf(lv.flags[b]) || lv.last[b] == lv.first[b]) return;  // the whole warp
  std::uint32_t q = lane < kCells ? neighbor<D>(lv, l, std::uint32_t(b), int(lane)) : kNone;
  const bool take = q != kNone && q > b && adaptive::leaf(lv.flags[q]) && lv.last[q] > lv.first[q];
  const unsigned mask = __ballot_sync(0xffffffffu, take);
  const std::uint32_t self = leaf_id(leaf_first, leaves, lv.first[b]);
  if (!offset) {
    if (lane == 0) count[self] = __popc(mask);
    return;
  }
  std::uint32_t rank = 0;  // taken lanes with a smaller box
  for (int k = 0; k < kCells; ++k) {
    const std::uint32_t other = __shfl_sync(0xffffffffu, q, k);
    rank += (mask >> k & 1u) && other < q;
  }
  if (take) ids[offset[self] + rank] = leaf_id(leaf_first, leaves, lv.first[q]);
}

__device__ std::uint32_t warp_sum(std::uint32_t v) {
  for (int s = 16; s > 0; s /= 2) v += __shfl_xor_sync(0xffffffffu, v, s);
  return v;
}

// A leaf's items: chunks of targets x segments of sources, the last chunk with `last_r` targets a
// lane, the others with 4.
struct LeafItems {
  std::uint32_t chunks, segments, last_r;
  __device__ LeafItems(std::uint32_t targets, std::uint32_t sources, std::uint32_t segment)
      : chunks((targets + kChunk - 1) / kChunk),
        segments(std::uint32_t((std::uint64_t(sources) + segment - 1) / segment)),
        last_r((targets - (chunks - 1) * kChunk + 31) / 32) {}
};

// A warp per kept box of level l: its near sources into sources[b], and its items into count[r][b]
// (bucket r = R - 1; the buckets are `stride` apart).
template <int D>
__global__ void count_kernel(DeviceLevel lv, int l, bool mutual, std::uint32_t segment, std::uint64_t stride, std::uint64_t* __restrict__ count,
                             std::uint32_t* __restrict__ sources) {
  const std::uint64_t b = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (b >= lv.boxes || !adaptive::leaf(lv.flags[b]) || lv.last[b] == lv.first[b]) return;  // the whole warp
  std::uint32_t from = 0, size = 0;
  if (lane < (D == 2 ? 9u : 27u)) cell<D>(lv, l, std::uint32_t(b), int(lane), mutual, from, size);
  const std::uint32_t s = warp_sum(size);
  if (lane) return;
  sources[b] = s;
  const LeafItems it(lv.last[b] - lv.first[b], s, segment);
  count[3 * stride + b] += std::uint64_t(it.chunks - 1) * it.segments;
  count[(it.last_r - 1) * stride + b] += it.segments;
}

// A warp per kept box of level l: its items (g, local index) from at[r][b] of the scanned counts.
__global__ void fill_kernel(DeviceLevel lv, std::uint32_t segment, std::uint64_t stride, const std::uint64_t* __restrict__ at,
                            const std::uint32_t* __restrict__ sources, std::uint32_t g0, NearItem* __restrict__ items) {
  const std::uint64_t b = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (b >= lv.boxes || !adaptive::leaf(lv.flags[b]) || lv.last[b] == lv.first[b]) return;
  const LeafItems it(lv.last[b] - lv.first[b], sources[b], segment);
  for (std::uint64_t r = 0; r < 4; ++r) {
    const std::uint64_t begin = at[r * stride + b], end = at[r * stride + b + 1];
    const std::uint32_t skip = r == 3 ? 0 : (it.chunks - 1) * it.segments;  // the last chunk's items
    for (std::uint64_t k = begin + lane; k < end; k += 32)
      items[k] = NearItem{g0 + std::uint32_t(b), skip + std::uint32_t(k - begin)};
  }
}

__global__ void bounds_kernel(const std::uint64_t* __restrict__ at, std::uint64_t stride, std::uint64_t* __restrict__ out) {
  if (threadIdx.x < 5) out[threadIdx.x] = at[threadIdx.x * stride];
}

// The items [0, n) of one bucket: a warp each, R targets a lane.
template <int D, class T, int R>
__global__ void __launch_bounds__(kThreads) item_kernel(const __grid_constant__ NearLevels L, const NearItem* __restrict__ items,
                                                        std::uint64_t n, bool mutual, std::uint32_t segment,
                                                        const std::uint32_t* __restrict__ sources,
                                                        const Body<T>* __restrict__ sorted, SoftenedGravity<D, T> g,
                                                        Acc4<T>* __restrict__ acc) {
  constexpr int kCells = D == 2 ? 9 : 27;
  __shared__ Body<T> batch[kWarps][32];
  __shared__ std::uint32_t from_of[kWarps][kCells], size_of[kWarps][kCells];
  const unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::uint64_t at = std::uint64_t(blockIdx.x) * kWarps + w;
  if (at >= n) return;  // the whole warp
  const NearItem item = items[at];
  int l = 0;
  while (item.box >= L.offset[l + 1]) ++l;
  const DeviceLevel& lv = L.level[l];
  const std::uint32_t b = item.box - std::uint32_t(L.offset[l]);
  const std::uint32_t S = sources[item.box];
  const std::uint32_t segments = LeafItems(lv.last[b] - lv.first[b], S, segment).segments;
  const std::uint32_t chunk = item.local / segments;
  if (lane < kCells) cell<D>(lv, l, b, int(lane), mutual, from_of[w][lane], size_of[w][lane]);
  const std::uint32_t t0 = lv.first[b] + chunk * kChunk, t1 = min(lv.last[b], t0 + kChunk);
  Body<T> me[R];
  Acc4<T> a[R];
  for (int r = 0; r < R; ++r) {
    const std::uint32_t i = t0 + lane + 32 * r;
    me[r] = i < t1 ? sorted[i] : Body<T>{};
    a[r] = Acc4<T>{};
  }
  __syncwarp();
  // Lane's cursor: cell k, place o in it, of source s + lane.
  const std::uint32_t s0 = (item.local % segments) * segment;
  const std::uint32_t s1 = std::uint32_t(min(std::uint64_t(S), std::uint64_t(s0) + segment));
  int k = 0;
  std::uint32_t o = s0 + lane;
  while (k < kCells && o >= size_of[w][k]) o -= size_of[w][k++];
  for (std::uint32_t s = s0; s < s1; s += 32) {
    const std::uint32_t count = min(32u, s1 - s);
    if (lane < count) batch[w][lane] = sorted[from_of[w][k] + o];
    __syncwarp();
    for (std::uint32_t j = 0; j < count; ++j) {
      const Body<T> src = batch[w][j];
#pragma unroll
      for (int r = 0; r < R; ++r) g(me[r], src, a[r]);
    }
    __syncwarp();
    o += 32;
    while (k < kCells && o >= size_of[w][k]) o -= size_of[w][k++];
  }
  for (int r = 0; r < R; ++r) {
    const std::uint32_t i = t0 + lane + 32 * r;
    if (i >= t1) break;
    if (segments == 1 && !mutual) {  // this item alone adds into target i
      add_into(&acc[i], a[r]);
    } else {
      atomicAdd(&acc[i].x, a[r].x);
      atomicAdd(&acc[i].y, a[r].y);
      if constexpr (D == 3) atomicAdd(&acc[i].z, a[r].z);
    }
  }
}

std::uint32_t near_segment_setting() {
  return std::uint32_t(env::integer("NEARFIELD_NEAR_SEGMENT", 32, 1 << 20, kSegment));
}

NearLevels near_levels(const DeviceAdaptive& a) {
  NearLevels L;
  L.count = int(a.levels.level.size());
  for (int l = 0; l < L.count; ++l) {
    L.level[l] = a.levels.level[l];
    L.offset[l + 1] = L.offset[l] + a.levels.level[l].boxes;
  }
  for (int l = L.count + 1; l <= kMaxAdaptiveLevel + 1; ++l) L.offset[l] = ~std::uint64_t(0);
  return L;
}

}  // namespace

void DeviceAdaptive::plan_leaf_pairs(std::uint32_t n) {
  std::uint64_t bound = 0;  // leaves are kept boxes
  for (const DeviceLevel& lv : levels.level) bound += lv.boxes;
  bound = std::min<std::uint64_t>(bound, n);
  // Grown with a quarter to spare: a simulation's trees creep, and each reallocation synchronizes.
  if (leaf_first_.size() < bound + 1) leaf_first_ = gpu::DeviceBuffer<std::uint32_t>(bound + 1 + bound / 4);
  if (leaf_half_offset_.size() < bound + 1) leaf_half_offset_ = gpu::DeviceBuffer<std::uint32_t>(bound + 1 + bound / 4);
  if (leaf_count_.size() < 1) leaf_count_ = gpu::DeviceBuffer<std::uint32_t>(1);
  leaves_ = 0;
  if (n > 0) {
    const thrust::counting_iterator<std::uint32_t> particles(0);
    const LeafStart start{leaf_box_.data(), leaf_level_.data()};
    std::size_t bytes = 0;
    NF_CUDA(cub::DeviceSelect::If(nullptr, bytes, particles, leaf_first_.data(), leaf_count_.data(), n, start));
    NF_CUDA(cub::DeviceSelect::If(temp_.get(bytes), bytes, particles, leaf_first_.data(), leaf_count_.data(), n, start));
    gpu::copy_to_host(&leaves_, leaf_count_.data(), sizeof(leaves_));
  }
  gpu::copy_to_device(leaf_first_.data() + leaves_, &n, sizeof(n));  // the end of the last leaf
  NF_CUDA(cudaMemsetAsync(leaf_half_offset_.data(), 0, (std::size_t(leaves_) + 1) * sizeof(std::uint32_t)));
  auto half = [&](const std::uint32_t* offset) {
    for (std::size_t l = 0; l < levels.level.size(); ++l) {
      const DeviceLevel& lv = levels.level[l];
      if (lv.boxes == 0) continue;
      gpu::dispatch_dim(levels.dim, [&](auto d) {
        half_kernel<decltype(d)::value><<<gpu::blocks_for(std::uint64_t(lv.boxes) * 32, kThreads), kThreads>>>(
            lv, int(l), leaf_first_.data(), leaves_, leaf_half_offset_.data(), offset, leaf_half_ids_.data());
      });
      NF_CUDA(cudaGetLastError());
    }
  };
  half(nullptr);
  std::size_t bytes = 0;
  const std::uint32_t m = leaves_ + 1;
  NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, leaf_half_offset_.data(), leaf_half_offset_.data(), m));
  NF_CUDA(cub::DeviceScan::ExclusiveSum(temp_.get(bytes), bytes, leaf_half_offset_.data(), leaf_half_offset_.data(), m));
  std::uint32_t links = 0;
  gpu::copy_to_host(&links, leaf_half_offset_.data() + leaves_, sizeof(links));
  if (leaf_half_ids_.size() < links) leaf_half_ids_ = gpu::DeviceBuffer<std::uint32_t>(links + links / 4 + 1);
  half(leaf_half_offset_.data());
}

void DeviceAdaptive::plan_near(std::uint32_t n, bool mutual) {
  segment_ = near_segment_setting();  // a refused setting changes nothing
  mutual_ = mutual;
  if (mutual) plan_leaf_pairs(n);
  const NearLevels L = near_levels(*this);
  const std::uint64_t m = L.offset[L.count], stride = m + 1;
  if (m >= (std::uint64_t(1) << 32))
    throw UsageError("fmm-adaptive: " + std::to_string(m) + " kept boxes, more than the near field's plan takes (2^32)");
  if (near_sources_.size() < m + 1) near_sources_ = gpu::DeviceBuffer<std::uint32_t>(m + 1);
  if (near_at_.size() < 4 * stride + 1) near_at_ = gpu::DeviceBuffer<std::uint64_t>(4 * stride + 1);
  if (near_bounds_.size() < 5) near_bounds_ = gpu::DeviceBuffer<std::uint64_t>(5);
  NF_CUDA(cudaMemsetAsync(near_at_.data(), 0, (4 * stride + 1) * sizeof(std::uint64_t)));
  for (int l = 0; l < L.count; ++l) {
    const DeviceLevel& lv = L.level[l];
    if (lv.boxes == 0) continue;
    gpu::dispatch_dim(levels.dim, [&](auto d) {
      count_kernel<decltype(d)::value><<<gpu::blocks_for(std::uint64_t(lv.boxes) * 32, kThreads), kThreads>>>(
          lv, l, mutual, segment_, stride, near_at_.data() + L.offset[l], near_sources_.data() + L.offset[l]);
    });
    NF_CUDA(cudaGetLastError());
  }
  std::size_t bytes = 0;
  NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, near_at_.data(), near_at_.data(), 4 * stride + 1));
  NF_CUDA(cub::DeviceScan::ExclusiveSum(temp_.get(bytes), bytes, near_at_.data(), near_at_.data(), 4 * stride + 1));
  bounds_kernel<<<1, 32>>>(near_at_.data(), stride, near_bounds_.data());
  NF_CUDA(cudaGetLastError());
  gpu::copy_to_host(near_bucket_, near_bounds_.data(), sizeof(near_bucket_));
  const std::uint64_t items = near_bucket_[4];
  if (items >= (std::uint64_t(1) << 32))
    throw UsageError("fmm-adaptive: the near field needs " + std::to_string(items) +
                     " work items, more than it takes (2^32); use a larger --leaf-size or fewer coincident points");
  if (near_items_.size() < items) near_items_ = gpu::DeviceBuffer<NearItem>(items + items / 4);
  for (int l = 0; l < L.count; ++l) {
    const DeviceLevel& lv = L.level[l];
    if (lv.boxes == 0) continue;
    fill_kernel<<<gpu::blocks_for(std::uint64_t(lv.boxes) * 32, kThreads), kThreads>>>(
        lv, segment_, stride, near_at_.data() + L.offset[l], near_sources_.data() + L.offset[l], std::uint32_t(L.offset[l]),
        near_items_.data());
    NF_CUDA(cudaGetLastError());
  }
}

template <int D, class T>
void near_leaves(const Body<T>* sorted, const DeviceAdaptive& a, T eps2, Acc4<T>* acc) {
  const NearLevels L = near_levels(a);
  const SoftenedGravity<D, T> g{eps2};
  const std::uint64_t* at = a.near_buckets();
  auto run = [&](auto r) {
    constexpr int R = decltype(r)::value;
    const std::uint64_t n = at[R] - at[R - 1];
    if (n == 0) return;
    const auto stream = static_cast<cudaStream_t>(a.near_stream(R - 1));
    item_kernel<D, T, R><<<gpu::blocks_for(n, kWarps), kThreads, 0, stream>>>(L, a.near_items() + at[R - 1], n, a.mutual(),
                                                                              a.near_segment(), a.near_sources(), sorted, g, acc);
    NF_CUDA(cudaGetLastError());
  };
  run(std::integral_constant<int, 4>{});
  run(std::integral_constant<int, 3>{});
  run(std::integral_constant<int, 2>{});
  run(std::integral_constant<int, 1>{});
}

#define NF_ADAPTIVE_NEAR(D, T) \
  template void near_leaves<D, T>(const Body<T>*, const DeviceAdaptive&, T, Acc4<T>*);
NF_ADAPTIVE_NEAR(2, float)
NF_ADAPTIVE_NEAR(2, double)
NF_ADAPTIVE_NEAR(3, float)
NF_ADAPTIVE_NEAR(3, double)

}  // namespace nf::farfield
