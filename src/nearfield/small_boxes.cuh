#pragma once
// Small boxes computed one particle per thread (ppt's mapping), shared by the kernels that cut the
// near field into work items (bpb-lb, n3-shfl, n3-rotate). A box-per-block or warp-per-item
// kernel idles most of its lanes on a box of a few particles, while a thread per particle reading
// its sources from global memory wastes none: on the H100 (2D uniform-exact, level 7) ppt beat
// bpb at P = 16 (0.037 against 0.055 ms) and lost at P = 32 (0.105 against 0.089 ms). A box is
// small when it holds fewer than 32 particles and its whole near field at most 2048 sources (so
// a small box beside a giant one stays with the work items: its threads would grind alone).
// bpb-lb also sends the last, partial warp of a bigger box down this path. The path runs over a
// compacted list of its particles, so no warp carries threads of boxes computed elsewhere.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <cub/device/device_scan.cuh>

#include "core/cuda_check.cuh"
#include "core/errors.h"
#include "physics/interaction.h"
#include "nearfield/box_tiles.cuh"
#include "nearfield/traversal.h"

namespace nf {

struct SmallBoxPolicy {
  static constexpr std::uint32_t max_count = 32;     // particles: below this a box may be small
  static constexpr std::uint32_t max_sources = 2048;  // its near field, own box included
  // bpb-lb: a bigger box's last, partial warp of targets (count mod 32 particles) goes to the
  // thread path too when it holds at most this many particles and the box's near field at most
  // max_sources: in a block it would cost a whole warp's time for a few busy lanes. On the H100
  // (2D clusters, N = 2M, level 11) blocks of 64 and 128 threads ran at 1.33-1.56e12
  // interactions/s against ppt's 1.65e12 on the same boxes, the lanes their last warp left idle
  // being the difference. Without the source limit, level 10 (bigger near fields) got 4% slower:
  // a warp of remainders from several boxes diverges over their different neighbor lists.
  static constexpr std::uint32_t max_remainder = 24;
};

//! The small-box limits in force: SmallBoxPolicy's, or for tuning sweeps the environment variable
//! NEARFIELD_SMALL_BOX=COUNT,SOURCES[,REMAINDER] (a box is small below COUNT particles with at most
//! SOURCES in its near field; 0,0 turns small boxes off; REMAINDER: the largest last partial warp
//! that bpb-lb sends to the thread path, 0 none). Read once per process.
struct SmallBoxLimits {
  std::uint32_t max_count = SmallBoxPolicy::max_count, max_sources = SmallBoxPolicy::max_sources;
  std::uint32_t max_remainder = SmallBoxPolicy::max_remainder;
};
inline SmallBoxLimits small_box_limits() {
  static const SmallBoxLimits limits = [] {
    SmallBoxLimits l;
    const char* env = std::getenv("NEARFIELD_SMALL_BOX");
    if (!env || !*env) return l;
    unsigned long long c = 0, s = 0, r = l.max_remainder;
    char extra = 0;
    const int got = std::sscanf(env, "%llu,%llu,%llu%c", &c, &s, &r, &extra);
    if ((got != 2 && got != 3) || c > 0xffffffffull || s > 0xffffffffull || r > 31)
      throw UsageError(std::string("NEARFIELD_SMALL_BOX must be COUNT,SOURCES[,REMAINDER] (counts; REMAINDER 0..31), not '") +
                       env + "'");
    l.max_count = static_cast<std::uint32_t>(c);
    l.max_sources = static_cast<std::uint32_t>(s);
    l.max_remainder = static_cast<std::uint32_t>(r);
    return l;
  }();
  return limits;
}

namespace small_boxes_detail {

struct FullLists {  // compact tree: box k is [first[k], first[k + 1]), full neighbor lists
  const std::uint32_t *first, *offset, *ids;
  SmallBoxLimits limits;
  std::uint32_t remainder_sources;  // a remainder goes to threads only when its box's near field is this small
  __device__ std::uint32_t count(std::uint32_t b) const { return first[b + 1] - first[b]; }
  __device__ std::uint32_t sources(std::uint32_t b) const {
    std::uint32_t s = count(b);
    for (std::uint32_t l = offset[b]; l < offset[b + 1]; ++l) s += count(ids[l]);
    return s;
  }
  // Particles of box b computed one per thread (its last ones): all of a small box, the last
  // partial warp of a bigger one (with remainders), else none; sets `small`.
  __device__ std::uint32_t threads(std::uint32_t b, bool& small) const {
    const std::uint32_t c = count(b), rest = c % 32;
    small = false;
    if (c < limits.max_count || (rest != 0 && rest <= limits.max_remainder && remainder_sources > 0)) {
      const std::uint32_t s = sources(b);
      if (c < limits.max_count && s <= limits.max_sources) {
        small = true;
        return c;
      }
      if (c >= 32 && rest != 0 && rest <= limits.max_remainder && s <= limits.max_sources && s <= remainder_sources)
        return rest;
    }
    return 0;
  }
};

// Per box of the tree: its small flag; per box to compute (k < targets): its thread count.
__global__ inline void flag_kernel(FullLists g, std::uint32_t m, std::uint32_t targets, std::uint8_t* flags,
                                   std::uint32_t* threads) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k == targets) threads[k] = 0;
  if (k >= m) return;
  bool small = false;
  const std::uint32_t t = g.threads(k, small);
  flags[k] = small;
  if (k < targets) threads[k] = t;
}

// The thread path's particles, compacted: box k's last (offset[k + 1] - offset[k]) particles.
__global__ inline void list_kernel(const std::uint32_t* first, std::uint32_t targets, const std::uint32_t* offset,
                                   std::uint32_t* list) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= targets) return;
  const std::uint32_t n = offset[k + 1] - offset[k], i0 = first[k + 1] - n;
  for (std::uint32_t t = 0; t < n; ++t) list[offset[k] + t] = i0 + t;
}

template <int D, class T, bool Guarded, bool Counting>
__global__ void small_box_kernel(NearFieldView<T> v, FullLists g, const std::uint32_t* __restrict__ list,
                                 std::uint32_t count) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const std::uint32_t i = list[k], box = v.particle_slot[i];
  const SoftenedGravity<D, T, Guarded> grav{v.eps2};
  unsigned long long n = 0;
  add_into(v.acc + i, near_field_sum<Counting>(grav, v.bodies, g.first, g.offset, g.ids, box, i, n));
  if constexpr (Counting) box_tiles::add_count(v.counter, n);
}

}  // namespace small_boxes_detail

//! The thread path of a tree (ppt's mapping over a compacted list of particles): which boxes are
//! small (plan), how many of each box's particles go one per thread, and their forces (launch,
//! added into acc). Small boxes go whole; with `remainder_sources` > 0 (bpb-lb) also the last
//! partial warp of a bigger box whose near field holds at most that many sources (and at most
//! SmallBoxLimits::max_sources), when it is at most SmallBoxLimits::max_remainder particles.
//! Threads of one warp take consecutive particles.
class SmallBoxes {
 public:
  explicit SmallBoxes(std::uint32_t remainder_sources = 0) : remainder_sources_(remainder_sources) {}
  template <class T>
  void plan(const NearFieldView<T>& v) {
    g_ = {v.box_first, v.near_full_offset, v.near_full_ids, small_box_limits(), remainder_sources_};
    count_ = 0;
    // Flags for every box of the tree (a multi-GPU part's halo boxes too: work items read them);
    // threads for the boxes computed (a part's own range).
    const std::uint32_t m = v.nonempty_count;
    targets_ = v.computed_boxes;
    if (m == 0) return;
    if (flags_.size() < m) flags_ = gpu::DeviceBuffer<std::uint8_t>(m);
    if (offset_.size() < targets_ + 1) offset_ = gpu::DeviceBuffer<std::uint32_t>(targets_ + 1);
    small_boxes_detail::flag_kernel<<<gpu::div_up(m + 1, 256), 256>>>(g_, m, targets_, flags_.data(), offset_.data());
    NF_CUDA_LAUNCHED();
    std::size_t need = 0;
    NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, need, offset_.data(), offset_.data(), static_cast<int>(targets_ + 1)));
    if (temp_.size() < need) temp_ = gpu::DeviceBuffer<unsigned char>(need);
    NF_CUDA(cub::DeviceScan::ExclusiveSum(temp_.data(), need, offset_.data(), offset_.data(), static_cast<int>(targets_ + 1)));
    NF_CUDA(cudaMemcpy(&count_, offset_.data() + targets_, sizeof(count_), cudaMemcpyDeviceToHost));
    if (count_ == 0) return;
    if (list_.size() < count_) list_ = gpu::DeviceBuffer<std::uint32_t>(count_);
    small_boxes_detail::list_kernel<<<gpu::div_up(targets_, 256), 256>>>(v.box_first, targets_, offset_.data(), list_.data());
    NF_CUDA_LAUNCHED();
  }
  //! Per box of the tree: 1 when small (valid after plan).
  const std::uint8_t* flags() const { return flags_.data(); }
  //! Per box computed, M + 1 offsets: box k's last (thread_offset()[k + 1] - thread_offset()[k])
  //! particles go one per thread (valid after plan).
  const std::uint32_t* thread_offset() const { return offset_.data(); }
  //! Particles on the thread path.
  std::uint32_t count() const { return count_; }
  bool any() const { return count_ > 0; }
  //! On `stream` (a cudaStream_t; null: the default stream).
  template <int D, class T, bool Guarded, bool Counting>
  void launch(const NearFieldView<T>& v, void* stream = nullptr) const {
    if (count_ == 0) return;
    small_boxes_detail::small_box_kernel<D, T, Guarded, Counting>
        <<<gpu::div_up(count_, 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(v, g_, list_.data(), count_);
    NF_CUDA_LAUNCHED();
  }

 private:
  std::uint32_t remainder_sources_;
  small_boxes_detail::FullLists g_{};
  gpu::DeviceBuffer<std::uint8_t> flags_;
  gpu::DeviceBuffer<std::uint32_t> offset_, list_;
  gpu::DeviceBuffer<unsigned char> temp_;
  std::uint32_t targets_ = 0, count_ = 0;
};

}  // namespace nf
