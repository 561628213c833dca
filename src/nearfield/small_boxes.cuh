#pragma once
// Small boxes computed one particle per thread (ppt's mapping), shared by the kernels that cut the
// near field into work items (bpb-lb, n3-shfl, n3-rotate). A box-per-block or warp-per-item
// kernel idles most of its lanes on a box of a few particles, while a thread per particle reading
// its sources from global memory wastes none: on the H100 (2D uniform-exact, level 7) ppt beat
// bpb at P = 16 (0.037 against 0.055 ms) and lost at P = 32 (0.105 against 0.089 ms). A box is
// small when it holds fewer than 32 particles and its whole near field at most 2048 sources (so
// a small box beside a giant one stays with the work items: its threads would grind alone).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/cuda_check.cuh"
#include "common/errors.h"
#include "common/interaction.h"
#include "nearfield/box_tiles.cuh"
#include "nearfield/traversal.h"

namespace nf {

struct SmallBoxPolicy {
  static constexpr std::uint32_t max_count = 32;     // particles: below this a box may be small
  static constexpr std::uint32_t max_sources = 2048;  // its near field, own box included
};

//! How a kernel's work items lay a box's targets on lanes: blocks of a power of two of threads
//! (32 .. 512, bpb-lb) or whole warps (the Newton-3 item kernels).
enum class LaneShape : std::uint8_t { pow2, warps };

//! The small-box limits in force: SmallBoxPolicy's, or for tuning sweeps the environment variable
//! NEARFIELD_SMALL_BOX=COUNT,SOURCES[,USE] (a box is small below COUNT particles with at most
//! SOURCES in its near field; 0,0 turns small boxes off; USE > 0: also a box of fewer than 512
//! particles whose work items would keep under USE percent of their lanes busy, near field as
//! before). Read once per process.
struct SmallBoxLimits {
  std::uint32_t max_count = SmallBoxPolicy::max_count, max_sources = SmallBoxPolicy::max_sources;
  std::uint32_t min_lane_use = 0;  // percent
};
inline SmallBoxLimits small_box_limits() {
  static const SmallBoxLimits limits = [] {
    SmallBoxLimits l;
    const char* env = std::getenv("NEARFIELD_SMALL_BOX");
    if (!env || !*env) return l;
    unsigned long long c = 0, s = 0, u = 0;
    char extra = 0;
    const int got = std::sscanf(env, "%llu,%llu,%llu%c", &c, &s, &u, &extra);
    if ((got != 2 && got != 3) || c > 0xffffffffull || s > 0xffffffffull || u > 100)
      throw UsageError(std::string("NEARFIELD_SMALL_BOX must be COUNT,SOURCES[,USE] (counts; USE a percentage), not '") +
                       env + "'");
    l.max_count = static_cast<std::uint32_t>(c);
    l.max_sources = static_cast<std::uint32_t>(s);
    l.min_lane_use = static_cast<std::uint32_t>(u);
    return l;
  }();
  return limits;
}

namespace small_boxes_detail {

struct FullLists {  // compact tree: box k is [first[k], first[k + 1]), full neighbor lists
  const std::uint32_t *first, *offset, *ids;
  SmallBoxLimits limits;
  LaneShape shape;
  __device__ std::uint32_t count(std::uint32_t b) const { return first[b + 1] - first[b]; }
  // Lanes the work items of a box of c targets (0 < c < 512) occupy.
  __device__ std::uint32_t lanes(std::uint32_t c) const {
    if (shape == LaneShape::warps) return (c + 31) / 32 * 32;
    std::uint32_t l = 32;
    while (l < c) l *= 2;
    return l;
  }
  __device__ bool small(std::uint32_t b) const {
    const std::uint32_t c = count(b);
    const bool few = c < limits.max_count;
    const bool wasteful = limits.min_lane_use > 0 && c < 512 && 100 * c < limits.min_lane_use * lanes(c);
    if (!few && !wasteful) return false;
    std::uint32_t s = c;
    for (std::uint32_t l = offset[b]; l < offset[b + 1]; ++l) s += count(ids[l]);
    return s <= limits.max_sources;
  }
};

__global__ inline void flag_kernel(FullLists g, std::uint32_t m, std::uint8_t* flags, std::uint32_t* any) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  const bool s = g.small(k);
  flags[k] = s;
  if (s) atomicOr(any, 1u);
}

template <int D, class T, bool Guarded, bool Counting>
__global__ void small_box_kernel(NearFieldView<T> v, FullLists g, const std::uint8_t* __restrict__ flags,
                                 std::uint32_t targets) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= v.n) return;
  const std::uint32_t box = v.particle_slot[i];
  if (box >= targets || !flags[box]) return;
  const SoftenedGravity<D, T, Guarded> grav{v.eps2};
  unsigned long long count = 0;
  v.acc[i] = near_field_sum<Counting>(grav, v.bodies, g.first, g.offset, g.ids, box, i, count);
  if constexpr (Counting) box_tiles::add_count(v.counter, count);
}

}  // namespace small_boxes_detail

//! Which boxes of a tree are small (plan) and their particles' forces (launch, stored into acc).
class SmallBoxes {
 public:
  explicit SmallBoxes(LaneShape shape) : shape_(shape) {}
  template <class T>
  void plan(const NearFieldView<T>& v) {
    g_ = {v.box_first, v.near_full_offset, v.near_full_ids, small_box_limits(), shape_};
    any_ = false;
    // Flags for every box of the tree (a multi-GPU part's halo boxes too: work items read them).
    const std::uint32_t m = v.tree_boxes;
    targets_ = v.nonempty_count;
    if (m == 0) return;
    if (flags_.size() < m) flags_ = gpu::DeviceBuffer<std::uint8_t>(m);
    gpu::DeviceBuffer<std::uint32_t> any(1);
    any.fill(0);
    small_boxes_detail::flag_kernel<<<gpu::div_up(m, 256), 256>>>(g_, m, flags_.data(), any.data());
    NF_CUDA_LAUNCHED();
    any_ = any.download()[0] != 0;
  }
  //! Per compact box: 1 when small (valid after plan).
  const std::uint8_t* flags() const { return flags_.data(); }
  bool any() const { return any_; }
  //! On `stream` (a cudaStream_t; null: the default stream).
  template <int D, class T, bool Guarded, bool Counting>
  void launch(const NearFieldView<T>& v, void* stream = nullptr) const {
    if (!any_) return;
    small_boxes_detail::small_box_kernel<D, T, Guarded, Counting>
        <<<gpu::div_up(v.n, 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(v, g_, flags_.data(), targets_);
    NF_CUDA_LAUNCHED();
  }

 private:
  LaneShape shape_;
  small_boxes_detail::FullLists g_{};
  gpu::DeviceBuffer<std::uint8_t> flags_;
  std::uint32_t targets_ = 0;
  bool any_ = false;
};

}  // namespace nf
