#pragma once
// Small boxes, shared by the kernels that cut the near field into work items (bpb-lb, n3-shfl,
// n3-rotate, n3-colour): a box of a few dozen particles idles most lanes of a box-per-block or
// Newton-3 warp kernel (a block of 32 threads per box also caps a Hopper SM at half its threads),
// so such boxes are computed one-sided over their full near field by two packed paths:
// - the thread path (ppt's mapping over a compacted list of particles) for the smallest boxes:
//   no lane idles. On the H100 (2D uniform-exact, level 7) ppt beat bpb at P = 16 (0.037 against
//   0.055 ms) and lost at P = 32 (0.105 against 0.089 ms);
// - the warp path for boxes of up to 64 particles: one warp per box, R = 1 or 2 targets per lane,
//   the box's sources (own box, then its neighbors, gathered across box boundaries) staged 32 at a
//   time in the warp's slice of shared memory and read as broadcasts; blocks of 8 warps keep the
//   SM full whatever the box size.
// A box is small when it holds at most SmallBoxLimits::max_count particles and its whole near
// field at most max_sources (a small box beside a giant one stays with the work items: its lanes
// would grind alone). bpb-lb also sends the last, partial warp of a bigger box down the thread
// path. Both paths are deterministic: each particle's sum is one thread's, in a fixed order.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/env.h"
#include "core/errors.h"
#include "physics/interaction.h"
#include "nearfield/box_tiles.cuh"
#include "nearfield/plan/box_lists.cuh"
#include "nearfield/plan/work_list.cuh"
#include "nearfield/traversal.h"

namespace nf {

struct SmallBoxPolicy {
  // A box of at most max_count particles may be small (a kernel may raise it to 64: n3-shfl and
  // n3-colour do in float), when its near field holds at most max_sources, own box included. Small boxes of
  // at most max_thread particles take the thread path, bigger ones the warp path. On the H100
  // (2D uniform-exact level 7, float, medians of 7; bpb 0.0555 / 0.0908 ms at P = 16 / 32):
  // P = 32 on the warp path 0.082 ms, on the thread path 0.097; P = 16 on the thread path 0.034,
  // on the warp path (half its lanes idle) 0.049. n3-rotate and bpb-lb keep 32: with 64, 3D
  // Plummer 2M level 8 took 1.56 against 1.46 ms (n3-rotate) and 1.78 against 1.67 (bpb-lb; and
  // still 1.73 with only boxes of exactly 64 small, 2D clusters level 11 0.498 against 0.480:
  // the warp path's own launch, late on the small-box stream, costs about 10 us).
  static constexpr std::uint32_t max_count = 32;
  static constexpr std::uint32_t max_sources = 2048;
  static constexpr std::uint32_t max_thread = 16;
  // bpb-lb: a bigger box's last, partial warp of targets (count mod 32 particles) goes to the
  // thread path too when it holds at most this many particles and the box's near field at most
  // max_sources: in a block it would cost a whole warp's time for a few busy lanes. On the H100
  // (2D clusters, N = 2M, level 11) blocks of 64 and 128 threads ran at 1.33-1.56e12
  // interactions/s against ppt's 1.65e12 on the same boxes, the lanes their last warp left idle
  // being the difference. Without the source limit, level 10 (bigger near fields) got 4% slower:
  // a warp of remainders from several boxes diverges over their different neighbor lists.
  static constexpr std::uint32_t max_remainder = 24;
  static constexpr std::uint32_t warp_path_max = 64;  // the warp path's largest box (2 targets a lane)
  // max_count of a kernel whose own path is slow on boxes of 33..64 in float only (n3-shfl,
  // n3-colour: their policies give the measurements); in double they keep max_count.
  template <class T>
  static constexpr std::uint32_t float_wide_count() {
    return sizeof(T) == 4 ? warp_path_max : max_count;
  }
};

//! The small-box limits in force: a kernel's (SmallBoxPolicy's, with the kernel's own max_count),
//! or for tuning sweeps the environment variable NEARFIELD_SMALL_BOX=COUNT,SOURCES[,REMAINDER[,THREAD]]
//! for every kernel: a box is small when it holds at most COUNT particles (at most 64) with at most
//! SOURCES in its near field (0,0 turns small boxes off); REMAINDER: the largest last partial warp
//! that bpb-lb sends to the thread path (0 none); THREAD: small boxes of at most this many
//! particles take the thread path, bigger ones the warp path. Read once per process.
struct SmallBoxLimits {
  std::uint32_t max_count = SmallBoxPolicy::max_count, max_sources = SmallBoxPolicy::max_sources;
  std::uint32_t max_remainder = SmallBoxPolicy::max_remainder, max_thread = SmallBoxPolicy::max_thread;
};
//! The environment's limits, if NEARFIELD_SMALL_BOX is set (else null).
inline const SmallBoxLimits* small_box_override() {
  static const SmallBoxLimits limits = [] {
    SmallBoxLimits l;
    const std::string text = ::nf::env::value("NEARFIELD_SMALL_BOX");
    if (text.empty()) return l;
    // Two to four counts (sscanf had taken "8,16x", " 8, 16" and "8,16,3.5" as 3).
    const std::vector<unsigned long long> got = ::nf::env::counts("NEARFIELD_SMALL_BOX");
    const std::size_t n = got.size();
    const unsigned long long c = n > 0 ? got[0] : 0, s = n > 1 ? got[1] : 0, r = n > 2 ? got[2] : l.max_remainder,
                             t = n > 3 ? got[3] : l.max_thread;
    if (n < 2 || n > 4 || c > SmallBoxPolicy::warp_path_max || s > 0xffffffffull || r > 31 || t > 64)
      throw UsageError("NEARFIELD_SMALL_BOX must be COUNT,SOURCES[,REMAINDER[,THREAD]] (COUNT 0..64, "
                       "REMAINDER 0..31, THREAD 0..64), not '" + text + "'");
    l.max_count = static_cast<std::uint32_t>(c);
    l.max_sources = static_cast<std::uint32_t>(s);
    l.max_remainder = static_cast<std::uint32_t>(r);
    l.max_thread = static_cast<std::uint32_t>(t);
    return l;
  }();
  return ::nf::env::value("NEARFIELD_SMALL_BOX").empty() ? nullptr : &limits;
}
//! A kernel's limits: SmallBoxPolicy's with the kernel's largest small box and source limit,
//! unless the environment overrides them.
inline SmallBoxLimits small_box_limits(std::uint32_t max_count = SmallBoxPolicy::max_count,
                                       std::uint32_t max_sources = SmallBoxPolicy::max_sources) {
  if (const SmallBoxLimits* env = small_box_override()) return *env;
  SmallBoxLimits l;
  l.max_count = max_count;
  l.max_sources = max_sources;
  return l;
}

namespace small_boxes_detail {

// Per box: 0 big, kThread small on the thread path, kWarp small on the warp path.
constexpr std::uint8_t kThread = 1, kWarp = 2;

// Which boxes are small, and which particles go one per thread.
struct Rule {
  plan::BoxLists g;  // compact tree, full neighbor lists
  SmallBoxLimits limits;
  std::uint32_t remainder_sources;  // a remainder goes to threads only when its box's near field is this small
  // Box b's kind (0, kThread, kWarp); `threads`: how many of its particles take the thread path
  // (its last ones): all of a small box on that path, the last partial warp of a bigger one (with
  // remainders), else none.
  __device__ std::uint8_t kind(std::uint32_t b, std::uint32_t& threads) const {
    const std::uint32_t c = g.count(b), rest = c % 32;
    threads = 0;
    const bool maybe_small = c <= limits.max_count;
    const bool maybe_rest = c >= 32 && rest != 0 && rest <= limits.max_remainder && remainder_sources > 0;
    if (!maybe_small && !maybe_rest) return 0;
    const std::uint32_t s = g.sources(b);
    if (maybe_small && s <= limits.max_sources) {
      if (c > limits.max_thread) return kWarp;
      threads = c;
      return kThread;
    }
    if (maybe_rest && s <= limits.max_sources && s <= remainder_sources) threads = rest;
    return 0;
  }
};

// The thread path's list (plan/work_list.cuh): box k's last `threads` particles, one item each.
struct ThreadPlanner {
  Rule rule;
  __device__ std::uint32_t count(std::uint32_t k) const {
    std::uint32_t t = 0;
    rule.kind(k, t);
    return t;
  }
  __device__ std::uint32_t item(std::uint32_t k, std::uint32_t local, std::uint32_t count, std::uint32_t&) const {
    return rule.g.first[k + 1] - count + local;
  }
};

// The warp path's list: its boxes.
struct WarpPlanner {
  const std::uint8_t* kinds;
  __device__ std::uint32_t count(std::uint32_t k) const { return kinds[k] == kWarp; }
  __device__ std::uint32_t item(std::uint32_t k, std::uint32_t, std::uint32_t, std::uint32_t&) const { return k; }
};

// Per box of the tree: its kind.
__global__ inline void kind_kernel(Rule r, std::uint32_t m, std::uint8_t* kinds) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  std::uint32_t t = 0;
  kinds[k] = r.kind(k, t);
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

struct WarpPathPolicy {
  static constexpr int warps = 8;        // per block, a box each
  static constexpr int max_ranges = 27;  // the box and up to 26 neighbors (3D)
};

// One box's targets (R per lane: lane l holds particles first + l + 32 r) against its sources,
// staged 32 R at a time in `tile` and read as broadcasts. The box itself is among the sources: a particle's pair with
// itself adds exactly zero (its offset is 0, and the guarded form zeroes 1/r^3 at r = 0), and the
// count leaves it out at the end.
template <int D, class T, int R, bool Guarded, bool Counting>
__device__ __forceinline__ void warp_box_sweep(const NearFieldView<T>& v, const std::uint32_t* rfirst,
                                               const std::uint32_t* rstart, std::uint32_t total, Body<T>* tile,
                                               unsigned lane, std::uint32_t first, std::uint32_t c) {
  const SoftenedGravity<D, T, Guarded> grav{v.eps2};
  Body<T> me[R];
  Acc4<T> acc[R];
  const Body<T> pad = v.bodies[first];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::uint32_t t = lane + 32u * r;
    me[r] = t < c ? v.bodies[first + t] : Body<T>{pad.x, pad.y, pad.z, T(0)};
    acc[r] = Acc4<T>{0, 0, 0, 0};
  }
  std::uint32_t range = 0;  // the range of this lane's next source: moves forward only
  for (std::uint32_t vb = 0; vb < total; vb += 32u * R) {  // batches of 32 R sources
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const std::uint32_t pos = vb + lane + 32u * q;
      if (pos < total) {
        while (rstart[range + 1] <= pos) ++range;
        tile[lane + 32u * q] = v.bodies[rfirst[range] + pos - rstart[range]];
      }
    }
    __syncwarp();
    const std::uint32_t m = min(32u * R, total - vb);
#pragma unroll 8
    for (std::uint32_t k = 0; k < m; ++k) {
      const Body<T> bj = tile[k];
#pragma unroll
      for (int r = 0; r < R; ++r) grav(me[r], bj, acc[r]);
    }
    __syncwarp();  // the tile is restaged next
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::uint32_t t = lane + 32u * r;
    if (t < c) {
      Acc4<T>* out = v.acc + first + t;
      *out = v.acc_zero ? acc[r] : plus(*out, acc[r]);  // adds into the output (core/body.h)
    }
  }
  if constexpr (Counting) {
    const std::uint32_t mine = (lane < c) + (R > 1 && lane + 32 < c);
    box_tiles::add_count(v.counter, static_cast<unsigned long long>(mine) * (total - 1));
  }
}

// The warp path: warp w of the grid computes box boxes[w] (at most 32 RMax particles).
template <int D, class T, int RMax, bool Guarded, bool Counting>
__global__ void __launch_bounds__(32 * WarpPathPolicy::warps)
    warp_box_kernel(NearFieldView<T> v, plan::BoxLists g, const std::uint32_t* __restrict__ boxes, std::uint32_t n) {
  __shared__ Body<T> tiles[WarpPathPolicy::warps][32 * RMax];
  __shared__ std::uint32_t rfirst[WarpPathPolicy::warps][WarpPathPolicy::max_ranges];
  __shared__ std::uint32_t rstart[WarpPathPolicy::warps][WarpPathPolicy::max_ranges + 1];
  const unsigned lane = threadIdx.x & 31u, w = threadIdx.x / 32;
  const std::uint32_t k = blockIdx.x * WarpPathPolicy::warps + w;
  if (k >= n) return;  // the whole warp
  const std::uint32_t box = boxes[k];
  // The box's sources: ranges "own box, then each neighbor" (full list); lane r describes range r.
  const std::uint32_t l0 = g.offset[box], ranges = 1 + g.offset[box + 1] - l0;
  std::uint32_t count = 0;
  if (lane < ranges) {
    const std::uint32_t b = lane == 0 ? box : g.ids[l0 + lane - 1];
    rfirst[w][lane] = g.first[b];
    count = g.count(b);
  }
  std::uint32_t end = count;  // inclusive scan over the lanes: where range `lane` ends
#pragma unroll
  for (unsigned d = 1; d < 32; d *= 2) {
    const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, end, d);
    if (lane >= d) end += up;
  }
  if (lane == 0) rstart[w][0] = 0;
  if (lane < ranges) rstart[w][lane + 1] = end;
  const std::uint32_t total = __shfl_sync(0xFFFFFFFFu, end, ranges - 1);
  __syncwarp();
  const std::uint32_t first = g.first[box], c = g.count(box);
  if (RMax == 1 || c <= 32)
    warp_box_sweep<D, T, 1, Guarded, Counting>(v, rfirst[w], rstart[w], total, tiles[w], lane, first, c);
  else
    warp_box_sweep<D, T, RMax, Guarded, Counting>(v, rfirst[w], rstart[w], total, tiles[w], lane, first, c);
}

}  // namespace small_boxes_detail

//! What the items of a kernel with small boxes compute of box b (c particles): none of a small
//! box, all but the thread path's remainder of a bigger one.
struct SmallBoxView {
  const std::uint8_t* kinds;
  const std::uint32_t* thread_offset;
  __device__ std::uint32_t item_targets(std::uint32_t b, std::uint32_t c) const {
    return kinds[b] ? 0 : c - (thread_offset[b + 1] - thread_offset[b]);
  }
};

//! The small boxes of a tree (plan: which boxes are small, which particles go one per thread;
//! launch: their forces, added into acc). Small boxes go whole; with `remainder_sources` > 0
//! (bpb-lb) also the last partial warp of a bigger box whose near field holds at most that many
//! sources (and at most SmallBoxLimits::max_sources), when it is at most
//! SmallBoxLimits::max_remainder particles. On the thread path the threads of one warp take
//! consecutive particles; on the warp path a warp takes a box.
class SmallBoxes {
 public:
  //! `max_count`: the kernel's largest small box (at most SmallBoxPolicy::warp_path_max);
  //! `max_sources`: the most sources a small box's near field may hold.
  explicit SmallBoxes(std::uint32_t remainder_sources = 0, std::uint32_t max_count = SmallBoxPolicy::max_count,
                      std::uint32_t max_sources = SmallBoxPolicy::max_sources)
      : remainder_sources_(remainder_sources), max_count_(max_count), max_sources_(max_sources) {}
  template <class T>
  void plan(const NearFieldView<T>& v) {
    plan_counts(v);
    read_totals();
    fill();
  }
  //! plan in three steps: the kinds and the lists' counts, queued (flags() and view() are valid on
  //! the device after it); read_totals; fill. A kernel queues its own counts after plan_counts and
  //! reads its totals beside read_totals, before any fill (plan/work_list.cuh: one wait for all).
  template <class T>
  void plan_counts(const NearFieldView<T>& v) {
    rule_ = {{v.box_first, v.near_full_offset, v.near_full_ids}, small_box_limits(max_count_, max_sources_), remainder_sources_};
    // Kinds for every box of the tree (a part's halo boxes too: work items read them); the lists
    // over the boxes computed.
    const std::uint32_t m = v.nonempty_count;
    plan::reserve(kinds_, m);
    if (m > 0) {
      small_boxes_detail::kind_kernel<<<gpu::div_up(m, 256), 256>>>(rule_, m, kinds_.data());
      NF_CUDA_LAUNCHED();
    }
    threads_.count(small_boxes_detail::ThreadPlanner{rule_}, v.computed_boxes);
    warps_.count(small_boxes_detail::WarpPlanner{kinds_.data()}, v.computed_boxes);
  }
  void read_totals() {
    threads_.read_total();
    warps_.read_total();
  }
  void fill() {
    threads_.fill(small_boxes_detail::ThreadPlanner{rule_});
    warps_.fill(small_boxes_detail::WarpPlanner{kinds_.data()});
  }
  //! Per box of the tree: non-zero when small, on either path (valid after plan).
  const std::uint8_t* flags() const { return kinds_.data(); }
  //! Per box computed, M + 1 offsets: box k's last (thread_offset()[k + 1] - thread_offset()[k])
  //! particles take the thread path (valid after plan; a small box on the warp path has none).
  const std::uint32_t* thread_offset() const { return threads_.offsets(); }
  //! Particles on the thread path, boxes on the warp path.
  std::uint32_t thread_count() const { return threads_.size(); }
  std::uint32_t warp_count() const { return warps_.size(); }
  bool any() const { return threads_.size() > 0 || warps_.size() > 0; }
  //! What the items still compute of each box (valid after plan).
  SmallBoxView view() const { return {kinds_.data(), threads_.offsets()}; }
  //! On `stream` (a cudaStream_t; null: the default stream), the thread path then the warp path.
  template <int D, class T, bool Guarded, bool Counting>
  void launch(const NearFieldView<T>& v, void* stream = nullptr) const {
    const auto s = static_cast<cudaStream_t>(stream);
    if (threads_.size() > 0) {
      small_boxes_detail::small_box_kernel<D, T, Guarded, Counting>
          <<<gpu::div_up(threads_.size(), 256), 256, 0, s>>>(v, rule_.g, threads_.items(), threads_.size());
      NF_CUDA_LAUNCHED();
    }
    if (warps_.size() > 0) {
      constexpr int kWarps = small_boxes_detail::WarpPathPolicy::warps;
      const unsigned grid = gpu::div_up(warps_.size(), kWarps);
      if (rule_.limits.max_count > 32)
        small_boxes_detail::warp_box_kernel<D, T, 2, Guarded, Counting>
            <<<grid, 32 * kWarps, 0, s>>>(v, rule_.g, warps_.items(), warps_.size());
      else
        small_boxes_detail::warp_box_kernel<D, T, 1, Guarded, Counting>
            <<<grid, 32 * kWarps, 0, s>>>(v, rule_.g, warps_.items(), warps_.size());
      NF_CUDA_LAUNCHED();
    }
  }

 private:
  std::uint32_t remainder_sources_, max_count_, max_sources_;
  small_boxes_detail::Rule rule_{};
  gpu::DeviceBuffer<std::uint8_t> kinds_;
  plan::WorkList<std::uint32_t> threads_, warps_;
};

}  // namespace nf
