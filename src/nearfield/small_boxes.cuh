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

#include "core/cuda_check.cuh"
#include "core/errors.h"
#include "physics/interaction.h"
#include "nearfield/box_tiles.cuh"
#include "nearfield/plan/box_lists.cuh"
#include "nearfield/plan/work_list.cuh"
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

// Which particles of a box go one per thread.
struct Rule {
  plan::BoxLists g;  // compact tree, full neighbor lists
  SmallBoxLimits limits;
  std::uint32_t remainder_sources;  // a remainder goes to threads only when its box's near field is this small
  // Particles of box b computed one per thread (its last ones): all of a small box, the last
  // partial warp of a bigger one (with remainders), else none; sets `small`.
  __device__ std::uint32_t threads(std::uint32_t b, bool& small) const {
    const std::uint32_t c = g.count(b), rest = c % 32;
    small = false;
    if (c < limits.max_count || (rest != 0 && rest <= limits.max_remainder && remainder_sources > 0)) {
      const std::uint32_t s = g.sources(b);
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

// The thread path's list (plan/work_list.cuh): box k's last threads(k) particles, one item each.
struct ThreadPlanner {
  Rule rule;
  __device__ std::uint32_t count(std::uint32_t k) const {
    bool small = false;
    return rule.threads(k, small);
  }
  __device__ std::uint32_t item(std::uint32_t k, std::uint32_t local, std::uint32_t count, std::uint32_t&) const {
    return rule.g.first[k + 1] - count + local;
  }
};

// Per box of the tree: its small flag.
__global__ inline void flag_kernel(Rule r, std::uint32_t m, std::uint8_t* flags) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  bool small = false;
  r.threads(k, small);
  flags[k] = small;
}

template <int D, class T, bool Guarded, bool Counting>
__global__ void small_box_kernel(NearFieldView<T> v, plan::BoxLists g, const std::uint32_t* __restrict__ list,
                                 std::uint32_t count) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const std::uint32_t i = list[k], box = v.particle_compact_box[i];
  const SoftenedGravity<D, T, Guarded> grav{v.eps2};
  unsigned long long n = 0;
  const Acc4<T> a = near_field_sum<Counting>(grav, v.bodies, g.first, g.offset, g.ids, box, i, n);
  v.acc[i] = v.acc_zero ? a : plus(v.acc[i], a);  // adds into the output (core/body.h)
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
    rule_ = {{v.box_first, v.near_full_offset, v.near_full_ids}, small_box_limits(), remainder_sources_};
    // Flags for every box of the tree (a part's halo boxes too: work items read them); the list
    // over the boxes computed.
    const std::uint32_t m = v.nonempty_count;
    plan::reserve(flags_, m);
    if (m > 0) {
      small_boxes_detail::flag_kernel<<<gpu::div_up(m, 256), 256>>>(rule_, m, flags_.data());
      NF_CUDA_LAUNCHED();
    }
    list_.build(small_boxes_detail::ThreadPlanner{rule_}, v.computed_boxes);
  }
  //! Per box of the tree: 1 when small (valid after plan).
  const std::uint8_t* flags() const { return flags_.data(); }
  //! Per box computed, M + 1 offsets: box k's last (thread_offset()[k + 1] - thread_offset()[k])
  //! particles go one per thread (valid after plan).
  const std::uint32_t* thread_offset() const { return list_.offsets(); }
  //! Particles on the thread path.
  std::uint32_t count() const { return list_.size(); }
  bool any() const { return list_.size() > 0; }
  //! On `stream` (a cudaStream_t; null: the default stream).
  template <int D, class T, bool Guarded, bool Counting>
  void launch(const NearFieldView<T>& v, void* stream = nullptr) const {
    if (!any()) return;
    small_boxes_detail::small_box_kernel<D, T, Guarded, Counting>
        <<<gpu::div_up(count(), 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(v, rule_.g, list_.items(), count());
    NF_CUDA_LAUNCHED();
  }

 private:
  std::uint32_t remainder_sources_;
  small_boxes_detail::Rule rule_{};
  gpu::DeviceBuffer<std::uint8_t> flags_;
  plan::WorkList<std::uint32_t> list_;
};

}  // namespace nf
