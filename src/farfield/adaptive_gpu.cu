// The adaptive tree on the GPU (farfield/adaptive_gpu.h): the flags, the kept levels, and the
// leaves' L2P (their near field: adaptive_near_gpu.cu).
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/adaptive_gpu.h"
#include "farfield/expansion.h"
#include "farfield/l2p_fixed.cuh"
#include "physics/interaction.h"
#include "tree/adaptive.h"
#include "tree/morton.h"
#include "tree/neighbors.h"

namespace nf::farfield {
namespace {

using namespace adaptive;
constexpr unsigned kThreads = 128;

// Index of `key` among the `m` ascending keys, or m when absent.
__device__ std::uint32_t find(const std::uint64_t* __restrict__ keys, std::uint32_t m, std::uint64_t key) {
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

// Kept and target from the parent's flags, split from the count; kept[b] = 1 or 0 (for the scan).
__global__ void parent_flags_kernel(DeviceLevel F, const std::uint8_t* __restrict__ parent_flags, bool deepest,
                                    std::uint32_t leaf_size, std::uint8_t* __restrict__ flags,
                                    std::uint32_t* __restrict__ kept) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= F.boxes) return;
  const std::uint8_t pf = parent_flags ? parent_flags[F.parent[b]] : std::uint8_t(kSplit | kExpanded);
  std::uint8_t f = 0;
  if (pf & kExpanded) f |= kKept;
  if (pf & kSplit) f |= kTarget;
  if ((f & kTarget) && !deepest && F.first[b + 1] - F.first[b] > leaf_size) f |= kSplit;
  flags[b] = f;
  kept[b] = f & kKept ? 1u : 0u;
}

// Expanded: a kept box that is split or adjacent to a split box (another thread may set its own
// box's kExpanded meanwhile: a byte store that leaves kSplit as it was).
template <int D>
__global__ void expand_kernel(DeviceLevel F, int l, std::uint8_t* __restrict__ flags) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= F.boxes) return;
  const std::uint8_t f = flags[b];
  if (!(f & kKept)) return;
  bool expand = (f & kSplit) != 0;
  if (!expand) {
    std::uint64_t keys[26];
    const int n = box_neighbor_keys<D>(F.key[b], l, keys);
    for (int k = 0; k < n && !expand; ++k) {
      const std::uint32_t q = find(F.key, F.boxes, keys[k]);
      expand = q < F.boxes && (flags[q] & kSplit);
    }
  }
  if (expand) flags[b] = f | kExpanded;
}

// The kept boxes of one level into their compact arrays (ids from the scans of this level, the
// one above (parents) and the one below (children)).
__global__ void scatter_kernel(DeviceLevel F, const std::uint8_t* __restrict__ full_flags,
                               const std::uint32_t* __restrict__ id, const std::uint32_t* __restrict__ parent_id,
                               const std::uint32_t* __restrict__ child_id, std::uint64_t* __restrict__ key,
                               std::uint32_t* __restrict__ first, std::uint32_t* __restrict__ last,
                               std::uint32_t* __restrict__ parent, std::uint32_t* __restrict__ child,
                               std::uint8_t* __restrict__ flags) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > F.boxes) return;
  const std::uint32_t n = id[b];
  if (b == F.boxes) {  // the sentinels after the last kept box
    first[n] = F.first[F.boxes];
    if (child_id) child[n] = child_id[F.child[F.boxes]];
    return;
  }
  if (!(full_flags[b] & kKept)) return;
  key[n] = F.key[b];
  first[n] = F.first[b];
  last[n] = F.first[b + 1];
  flags[n] = full_flags[b];
  if (parent_id) parent[n] = parent_id[F.parent[b]];
  if (child_id) child[n] = child_id[F.child[b]];
}

// Whether kept box b of a level is split (the select of DeviceLevel::split).
struct IsSplit {
  const std::uint8_t* flags;
  __device__ bool operator()(std::uint32_t b) const { return (flags[b] & kSplit) != 0; }
};

// Each leaf's particles learn their leaf and its level.
__global__ void leaf_kernel(DeviceLevel lv, int l, std::uint32_t* __restrict__ leaf_box,
                            std::uint8_t* __restrict__ leaf_level) {
  const std::uint32_t b = blockIdx.x;
  if (!leaf(lv.flags[b])) return;
  for (std::uint32_t i = lv.first[b] + threadIdx.x; i < lv.last[b]; i += blockDim.x) {
    leaf_box[i] = b;
    leaf_level[i] = std::uint8_t(l);
  }
}

template <int D, class T, int P>  // the order P a template argument (l2p_fixed.cuh)
__global__ void l2p_leaves_kernel(const Body<T>* __restrict__ sorted, std::uint32_t n,
                                  const std::uint32_t* __restrict__ leaf_box, const std::uint8_t* __restrict__ leaf_level,
                                  AdaptiveGeometry g, int p, int terms, const T* __restrict__ L,
                                  Acc4<T>* __restrict__ acc) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int l = leaf_level[i];
  if (l < 2) return;  // levels 0 and 1 have no far field
  const std::uint32_t b = leaf_box[i];
  std::uint32_t ic[D];
  morton_coords<D>(g.key[l][b], ic);
  const double h = g.side[l], inv = g.inv_side[l];
  const Body<T> body = sorted[i];
  const double x[3] = {double(body.x), double(body.y), double(body.z)};
  T y[D];
  for (int a = 0; a < D; ++a) y[a] = T((x[a] - (g.origin[a] + (ic[a] + 0.5) * h)) * inv);
  T a[D] = {};
  l2p_fixed<D, T, P>(L + g.start[l] + std::size_t(b) * terms, y, a);
  const T scale = T(inv * inv);
  Acc4<T> add{a[0] * scale, a[1] * scale, T(0), T(0)};
  if constexpr (D == 3) add.z = a[2] * scale;
  add_into(&acc[i], add);
}

}  // namespace

void DeviceAdaptive::build(const DeviceLevels& full, std::uint32_t leaf_size, std::uint32_t n) {
  const int K = full.leaf;
  levels.dim = full.dim, levels.leaf = K, levels.domain = full.domain;
  levels.level.assign(std::size_t(K) + 1, DeviceLevel{});
  if (store_.size() < std::size_t(K) + 1) store_.resize(std::size_t(K) + 1);
  std::vector<std::uint32_t> kept(std::size_t(K) + 1, 0);
  for (int l = 0; l <= K; ++l) {  // the flags, from the root down, and each level's kept ids
    const DeviceLevel& F = full.level[l];
    Storage& s = store_[l];
    if (s.full_flags.size() < F.boxes + std::size_t(1)) s.full_flags = gpu::DeviceBuffer<std::uint8_t>(F.boxes + std::size_t(1));
    if (s.id.size() < F.boxes + std::size_t(1)) s.id = gpu::DeviceBuffer<std::uint32_t>(F.boxes + std::size_t(1));
    NF_CUDA(cudaMemsetAsync(s.id.data() + F.boxes, 0, sizeof(std::uint32_t)));
    if (F.boxes) {
      parent_flags_kernel<<<gpu::blocks_for(F.boxes, kThreads), kThreads>>>(
          F, l ? store_[l - 1].full_flags.data() : nullptr, l == K, leaf_size, s.full_flags.data(), s.id.data());
      NF_CUDA(cudaGetLastError());
      if (l < K) {
        gpu::dispatch_dim(full.dim, [&](auto d) {
          expand_kernel<decltype(d)::value><<<gpu::blocks_for(F.boxes, kThreads), kThreads>>>(F, l, s.full_flags.data());
        });
        NF_CUDA(cudaGetLastError());
      }
    }
    std::size_t bytes = 0;
    NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, s.id.data(), s.id.data(), F.boxes + 1));
    NF_CUDA(cub::DeviceScan::ExclusiveSum(temp_.get(bytes), bytes, s.id.data(), s.id.data(), F.boxes + 1));
    gpu::copy_to_host(&kept[l], s.id.data() + F.boxes, sizeof(std::uint32_t));
  }
  if (split_counts_.size() < std::size_t(K) + 1) split_counts_ = gpu::DeviceBuffer<std::uint32_t>(std::size_t(K) + 1);
  NF_CUDA(cudaMemsetAsync(split_counts_.data(), 0, (std::size_t(K) + 1) * sizeof(std::uint32_t)));
  for (int l = 0; l <= K; ++l) {  // the kept boxes' arrays
    const DeviceLevel& F = full.level[l];
    Storage& s = store_[l];
    const std::size_t m = kept[l];
    if (s.key.size() < m + 1) {
      s.key = gpu::DeviceBuffer<std::uint64_t>(m + 1);
      s.first = gpu::DeviceBuffer<std::uint32_t>(m + 1);
      s.last = gpu::DeviceBuffer<std::uint32_t>(m + 1);
      s.parent = gpu::DeviceBuffer<std::uint32_t>(m + 1);
      s.child = gpu::DeviceBuffer<std::uint32_t>(m + 1);
      s.flags = gpu::DeviceBuffer<std::uint8_t>(m + 1);
    }
    scatter_kernel<<<gpu::blocks_for(F.boxes + std::uint64_t(1), kThreads), kThreads>>>(
        F, s.full_flags.data(), s.id.data(), l ? store_[l - 1].id.data() : nullptr,
        l < K ? store_[l + 1].id.data() : nullptr, s.key.data(), s.first.data(), s.last.data(), s.parent.data(),
        s.child.data(), s.flags.data());
    NF_CUDA(cudaGetLastError());
    DeviceLevel& out = levels.level[l];
    out.boxes = kept[l];
    out.key = s.key.data(), out.first = s.first.data(), out.last = s.last.data(), out.flags = s.flags.data();
    out.parent = l ? s.parent.data() : nullptr;
    out.child = l < K ? s.child.data() : nullptr;
    // The split boxes, their count left on the device (M2L's blocks past it return at once).
    if (s.split.size() < m + 1) s.split = gpu::DeviceBuffer<std::uint32_t>(m + 1);
    out.split = s.split.data(), out.split_count = split_counts_.data() + l;
    if (m > 0 && l < K) {
      const thrust::counting_iterator<std::uint32_t> boxes(0);
      std::size_t bytes = 0;
      NF_CUDA(cub::DeviceSelect::If(nullptr, bytes, boxes, s.split.data(), split_counts_.data() + l, m, IsSplit{s.flags.data()}));
      NF_CUDA(cub::DeviceSelect::If(temp_.get(bytes), bytes, boxes, s.split.data(), split_counts_.data() + l, m,
                                    IsSplit{s.flags.data()}));
    }
  }
  if (leaf_box_.size() < n) leaf_box_ = gpu::DeviceBuffer<std::uint32_t>(n), leaf_level_ = gpu::DeviceBuffer<std::uint8_t>(n);
  for (int l = 0; l <= K; ++l) {
    if (levels.level[l].boxes == 0) continue;
    leaf_kernel<<<levels.level[l].boxes, kThreads>>>(levels.level[l], l, leaf_box_.data(), leaf_level_.data());
    NF_CUDA(cudaGetLastError());
  }
}

template <int D, class T>
void l2p_leaves(const Body<T>* sorted, std::uint32_t n, const DeviceAdaptive& a, const AdaptiveGeometry& g, int p,
                const T* L, Acc4<T>* acc) {
  if (n == 0) return;
  dispatch_fixed_order(p, [&](auto order) {
    l2p_leaves_kernel<D, T, decltype(order)::value><<<gpu::blocks_for(n, 128), 128, 0, gpu::launch_stream()>>>(
        sorted, n, a.leaf_box(), a.leaf_level(), g, p, terms<D>(p), L, acc);
  });
  NF_CUDA(cudaGetLastError());
}

#define NF_ADAPTIVE(D, T)                                                                                        \
  template void l2p_leaves<D, T>(const Body<T>*, std::uint32_t, const DeviceAdaptive&, const AdaptiveGeometry&, int, \
                                 const T*, Acc4<T>*);
NF_ADAPTIVE(2, float)
NF_ADAPTIVE(2, double)
NF_ADAPTIVE(3, float)
NF_ADAPTIVE(3, double)

}  // namespace nf::farfield
