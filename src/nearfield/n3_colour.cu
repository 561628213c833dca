// n3-colour: Newton's third law, deterministic and without atomics. The links of the half near
// field (a box with itself, a box with a non-empty neighbor) are coloured so that no two links of
// one colour share a box, and the colours run one after another: within a colour every warp owns
// its two boxes outright and adds into acc with plain loads and stores. A link's colour is its
// direction class (the neighbor offset up to sign) and the parity of its lower box along the
// first axis where the offset is non-zero: two links of one direction that share a box are
// consecutive along that axis, so their lower boxes differ in parity. 9 colours in 2D, 27 in 3D.
// The sum for a particle therefore runs in a fixed order (colour, then link, then source batch),
// whatever the scheduling: repeated runs agree bit for bit. A warp computes its link with lane
// rotation (rotate_agent.cuh), target chunks of 32 R against the whole other box. Small boxes
// take the small-box paths (small_boxes.cuh), deterministic too; their links with big boxes are
// one-sided.
#include "nearfield/n3_common.cuh"
#include "nearfield/plan/box_lists.cuh"
#include "nearfield/plan/work_list.cuh"
#include "nearfield/rotate_agent.cuh"
#include "tree/morton.h"

namespace nf {
namespace {

constexpr int kMaxColours = plan::kMaxClasses;  // 1 + 2 * 3^3 codes fit in 6 bits

//! A box with itself (a_begin == b_begin) or with a non-empty half neighbor; one_sided: the
//! sources act on the targets only (a big box's link with a small one, whose own particles the
//! small-box paths compute).
struct Link {
  std::uint32_t a_begin, a_end, b_begin, b_end, one_sided;
};

// Colour of the link between boxes of Morton keys a and b: 0 for a box with itself, else
// 1 + 2 * code(canonical offset) + parity of the lower box along the offset's first axis.
template <int D>
__device__ std::uint8_t link_colour(std::uint64_t a, std::uint64_t b) {
  if (a == b) return 0;
  std::uint32_t ca[D], cb[D];
  morton_coords<D>(a, ca);
  morton_coords<D>(b, cb);
  int v[D];
  int first = -1;
  for (int k = 0; k < D; ++k) {
    v[k] = int(cb[k]) - int(ca[k]);
    if (first < 0 && v[k] != 0) first = k;
  }
  const bool flip = v[first] < 0;  // canonical offset: first non-zero component positive
  int code = 0;
  for (int k = D - 1; k >= 0; --k) code = code * 3 + ((flip ? -v[k] : v[k]) + 1);
  const std::uint32_t lower = flip ? cb[first] : ca[first];
  return static_cast<std::uint8_t>(1 + 2 * code + (lower & 1u));
}

// The plan (plan/work_list.cuh): box k's links are itself, then each (non-empty) half neighbor;
// a link's class is its colour. With small boxes (`small`, SmallBoxes::flags(); null: none) a
// small box has no link with itself or with another small box, and a link of a big and a small
// box is one-sided, the big box's targets against the small box.
template <int D>
struct LinkPlanner {
  const std::uint64_t* box_key;
  plan::BoxLists g;  // half lists
  const std::uint8_t* small;
  __device__ bool is_small(std::uint32_t b) const { return small && small[b]; }
  __device__ bool linked(bool k_small, std::uint32_t nb) const { return !(k_small && is_small(nb)); }
  __device__ std::uint32_t count(std::uint32_t k) const {
    if (!small) return 1 + g.neighbors(k);
    const bool ks = is_small(k);
    std::uint32_t n = ks ? 0 : 1;
    for (std::uint32_t l = g.offset[k]; l < g.offset[k + 1]; ++l) n += linked(ks, g.ids[l]);
    return n;
  }
  __device__ Link item(std::uint32_t k, std::uint32_t local, std::uint32_t, std::uint32_t& colour) const {
    const bool ks = is_small(k);
    std::uint32_t nb = k;
    if (ks || local > 0) {  // the (local - (ks ? 0 : 1))-th linked neighbor
      std::uint32_t skip = ks ? local : local - 1, l = g.offset[k];
      for (;; ++l) {
        if (!linked(ks, g.ids[l])) continue;
        if (skip == 0) break;
        --skip;
      }
      nb = g.ids[l];
    }
    colour = link_colour<D>(box_key[k], box_key[nb]);
    if (nb != k && is_small(nb)) return {g.first[k], g.first[k + 1], g.first[nb], g.first[nb + 1], 1u};
    if (ks) return {g.first[nb], g.first[nb + 1], g.first[k], g.first[k + 1], 1u};
    return {g.first[k], g.first[k + 1], g.first[nb], g.first[nb + 1], 0u};
  }
};

struct ColourPolicy {
  static constexpr int warps = 4;  // warps per block, each on its own links of the colour (not tuned, as n3-rotate's)
  // In float, boxes of up to 64 particles take the small-box paths: each colour is a launch of its own, so
  // links of small boxes cost a launch's latency nine (2D) or 27 (3D) times over. On the H100
  // (float, medians of 7): 2D uniform-exact level 7 P = 64 0.284 ms against 0.300 with links
  // only for boxes over 32 (bpb 0.283), P = 32 0.082 against 0.164 with no small boxes; 3D
  // Plummer 2M level 8 3.32 against 3.88 (limit 32) and 19.3 (none). In double the links win from
  // 33 on (newton3 and newton3-3d, P = 64: 3D 3.81 ms with 32 against 4.79 with 64, 2D 0.668
  // against 0.728), so double keeps 32.
  template <class T>
  static constexpr std::uint32_t small_max() {
    return SmallBoxPolicy::float_wide_count<T>();
  }
};

// One colour: each warp takes links and computes them whole, target chunk by target chunk.
template <int D, class T, int R, bool Guarded, bool Counting>
__global__ void __launch_bounds__(32 * ColourPolicy::warps)
    colour_kernel(NearFieldView<T> v, const Link* __restrict__ links, std::uint32_t n_links, std::uint32_t* next) {
  __shared__ Body<T> tiles[ColourPolicy::warps][32];
  const unsigned lane = threadIdx.x & 31u;
  Body<T>* tile = tiles[threadIdx.x / 32];
  RotateAgent<D, T, R, 32, Guarded, Counting> agent{{v.eps2}, {}, lane, 0};
  auto sink = [&](std::uint32_t j, const Acc4<T>& react) { warp_pairs::add_plain_to<D>(v.acc + j, react); };
  for (std::uint32_t it = warp_pairs::next_item(next, lane); it < n_links; it = warp_pairs::next_item(next, lane)) {
    const Link link = links[it];
    const bool self = link.a_begin == link.b_begin;
    for (std::uint32_t ta = link.a_begin; ta < link.a_end; ta += 32u * R) {
      agent.t.load(v.bodies, ta, min(ta + 32u * R, link.a_end), lane);
      // A box with itself: the chunk against itself (i < j) and every later chunk; else the whole
      // neighbor box.
      warp_pairs::sweep_sources(agent, v.bodies, self ? ta : link.b_begin, link.b_end, self, !link.one_sided, tile, lane,
                                sink);
      agent.t.add_plain(v.acc);
      __syncwarp();  // the next chunk's sweep may read what this one wrote through other lanes
    }
  }
  if constexpr (Counting) box_tiles::add_count(v.counter, agent.count);
}

template <int D, class T>
class N3Colour final : public GpuNearFieldKernel<T> {
 public:
  void plan(const NearFieldView<T>& v) override {
    r_ = warp_pairs::targets_per_lane(v.max_box_count, warp_pairs::max_targets_per_lane<T>());
    // A part computing half-list pairs only (BoxScope) lacks its boxes' lower neighbors, so a
    // small box's one-sided near field would be incomplete: there every pair goes through links.
    hybrid_ = v.lower_neighbors;
    // Both lists' counts, then their totals, then the fills (plan/work_list.cuh); the links read
    // the small boxes' flags on the device (all zero when no box is small: the same links as no
    // flags). Stable: within a colour the links keep their Z-order.
    if (hybrid_) small_.plan_counts(v);
    const LinkPlanner<D> planner{v.box_key, {v.box_first, v.near_offset, v.near_ids}, hybrid_ ? small_.flags() : nullptr};
    links_.count(planner, v.computed_boxes, kMaxColours);
    if (hybrid_) small_.read_totals();
    links_.read_total();
    if (hybrid_) small_.fill();
    links_.fill(planner);
    if (counters_.size() == 0) counters_ = gpu::DeviceBuffer<std::uint32_t>(kMaxColours);
  }
  // The small boxes first (small_boxes.cuh: each of their particles summed by one thread, in a
  // fixed order), then the colours; the two write disjoint particles, all on the default stream.
  void launch(const NearFieldView<T>& v) override {
    if (hybrid_ && small_.any())
      gpu::dispatch_mode(v.counter, v.guarded,
                         [&](auto guarded, auto counting) { small_.launch<D, T, guarded(), counting()>(v); });
    if (links_.size() == 0) return;
    counters_.fill(0);
    warp_pairs::dispatch_r<warp_pairs::max_targets_per_lane<T>()>(r_, [&](auto r) {
      gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) { run<r(), guarded(), counting()>(v); });
    });
  }

 private:
  template <int R, bool Guarded, bool Counting>
  void run(const NearFieldView<T>& v) {
    auto kernel = colour_kernel<D, T, R, Guarded, Counting>;
    const int threads = 32 * ColourPolicy::warps;
    const unsigned resident = warp_pairs::resident_blocks(kernel, threads, 0);
    for (int c = 0; c < kMaxColours; ++c) {  // one launch per colour: the launches order the colours
      const std::uint32_t count = links_.class_size(c);
      if (count == 0) continue;
      const unsigned grid = std::min<unsigned>(resident, gpu::div_up(count, ColourPolicy::warps));
      kernel<<<grid, threads>>>(v, links_.items() + links_.class_begin(c), count, counters_.data() + c);
      NF_CUDA_LAUNCHED();
    }
  }

  int r_ = 1;
  bool hybrid_ = false;
  // No source limit: on one of several GPUs (--gpus, cross pairs twice) a halo box's neighbor
  // list is cut short, so its near field's size is not the one-GPU tree's, while its count is; a
  // box's kind must be the same there for the results to agree bit for bit.
  SmallBoxes small_{0, ColourPolicy::small_max<T>(), 0xFFFFFFFFu};
  plan::WorkList<Link> links_;
  gpu::DeviceBuffer<std::uint32_t> counters_;
};

}  // namespace

NF_EXPORT_GPU_NEAR_FIELD(n3_colour, N3Colour)

}  // namespace nf
