#pragma once
// The launch side shared by the Newton-3 warp kernels: the plan (work items sized to the boxes)
// and the dispatch of the runtime choices (targets per lane R, guarded, counting) to template
// instantiations of a kernel.
#include <algorithm>

#include "core/cuda_check.cuh"
#include "nearfield/pair_items.cuh"
#include "nearfield/plan/class_launcher.h"
#include "nearfield/small_boxes.cuh"
#include "nearfield/warp_pairs.cuh"

namespace nf::warp_pairs {

//! Calls f(std::integral_constant<int, R>{}) for the runtime R (a power of two <= RMax).
template <int RMax, class F>
void dispatch_r(int r, F&& f) {
  switch (r) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: if constexpr (RMax >= 2) { f(std::integral_constant<int, 2>{}); break; } [[fallthrough]];
    case 4: if constexpr (RMax >= 4) { f(std::integral_constant<int, 4>{}); break; } [[fallthrough]];
    case 8: if constexpr (RMax >= 8) { f(std::integral_constant<int, 8>{}); break; } [[fallthrough]];
    default: if constexpr (RMax >= 16) f(std::integral_constant<int, 16>{}); else throw std::logic_error("R too large");
  }
}

struct ItemKernelPolicy {
  // Warps per block, each on its own items (persistent grid, items fetched dynamically). Not
  // tuned: the warps are independent, so the block size only sets the granularity; occupancy is
  // set by registers (ptxas: 128 per thread for 2D float at R = 16, no spills: 16 warps per SM).
  static constexpr int warps = 4;
};

//! Lanes per item and targets per lane of item class c (PairItemList): groups of 8 and 16 lanes
//! for the two classes of at most 8 and 16 targets (a warp runs 4 or 2 items at once), then whole
//! warps with R = 1, 2, 4, ...
constexpr unsigned class_width(int c) { return c == 0 ? 8u : c == 1 ? 16u : 32u; }
constexpr int class_targets_per_lane(int c) { return c < 2 ? 1 : 1 << (c - 2); }

//! The item kernel of the family: each group of W lanes (32 / W to a warp) fetches items, keeps
//! the item's targets in registers (R per lane), sweeps its sources with
//! Agent<D, T, R, W, Guarded, Counting>, and adds the reactions and then its targets' forces into
//! acc with atomics. A warp takes 32 / W consecutive items at a time; a group left without one
//! (past the end) sweeps padding with no targets.
template <template <int, class, int, unsigned, bool, bool> class Agent, int D, class T, int R, unsigned W,
          bool Guarded, bool Counting>
__global__ void __launch_bounds__(32 * ItemKernelPolicy::warps)
    item_kernel(NearFieldView<T> v, const PairItem* __restrict__ items, std::uint32_t n_items, std::uint32_t* next) {
  static_assert(W == 32 || R == 1, "groups narrower than a warp hold one target per lane");
  constexpr std::uint32_t kGroups = 32 / W;
  __shared__ Body<T> tiles[ItemKernelPolicy::warps][32];
  const unsigned lane = threadIdx.x & 31u, sub = lane % W;
  Body<T>* tile = tiles[threadIdx.x / 32] + (lane / W) * W;
  Agent<D, T, R, W, Guarded, Counting> agent{{v.eps2}, {}, sub, 0};
  for (std::uint32_t base = next_item(next, lane, kGroups); base < n_items; base = next_item(next, lane, kGroups)) {
    const std::uint32_t it = base + lane / W;
    const PairItem item = W == 32 || it < n_items ? items[it] : PairItem{0, 0, 0, 0, 1u};
    agent.t.load(v.bodies, item.a_begin, item.a_end, sub);
    sweep_sources(agent, v.bodies, item.b_begin, item.b_end, item.a_begin == item.b_begin, !item.one_sided, tile, sub,
                  [&](std::uint32_t j, const Acc4<T>& react) { add_atomic<D>(v.acc + j, react); });
    agent.t.add_to(v.acc);
  }
  if constexpr (Counting) box_tiles::add_count(v.counter, agent.count);
}

//! A Newton-3 warp kernel of this family. Plan: the small boxes of at most SmallMax particles
//! (small_boxes.cuh: one-sided, one particle per thread or a box per warp), and the work items of
//! the rest in classes by target count (up to 8, 16, 32, 64, ... 32 RMax targets), so that a box
//! is computed with few targets per lane or many, and a ragged end of a few targets takes a
//! quarter or half warp: one launch per non-empty class. Pairs of two big boxes are computed once (Newton-3); a big box
//! and a small neighbor one-sided in each direction (the big box's item, the small box's threads).
template <int D, class T, int RMax, template <int, class, int, unsigned, bool, bool> class Agent,
          std::uint32_t SmallMax = SmallBoxPolicy::max_count>
class ItemKernel final : public GpuNearFieldKernel<T> {
 public:
  void plan(const NearFieldView<T>& v) override {
    // A part computing half-list pairs only (BoxScope) lacks its boxes' lower neighbors, so a
    // small box's one-sided near field would be incomplete: there every pair goes through items.
    hybrid_ = v.lower_neighbors;
    // Both lists' counts first, then their totals (plan/work_list.cuh). The items read the small
    // boxes' flags on the device (all zero when no box is small: the same items as no flags).
    if (hybrid_) small_.plan_counts(v);
    items_.count(v.box_first, v.computed_boxes, v.near_offset, v.near_ids, 32u * targets_per_lane(v.max_box_count, RMax),
                 /*classify=*/true, hybrid_ ? small_.flags() : nullptr);
    if (hybrid_) small_.read_totals();
    items_.read_total();
    if (hybrid_) small_.fill();
    items_.fill();
    if (counter_.size() == 0) counter_ = gpu::DeviceBuffer<std::uint32_t>(PairItemList::kClasses);
  }
  // The small boxes and each class on a stream of their own (plan/class_launcher.h): the small
  // boxes' threads add their own particles' sums and the items add only onto big boxes'
  // particles, so the launches overlap safely.
  void launch(const NearFieldView<T>& v) override {
    if (items_.size() > 0) counter_.fill(0);  // on the default stream: before every launch below
    gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) {
      launcher_.launch(
          hybrid_ && small_.any(), [&](int c) { return items_.class_size(c); },
          [&](void* stream) { small_.launch<D, T, guarded(), counting()>(v, stream); },
          [&](int c, void* stream) {
            const auto items = items_.items() + items_.class_begin(c);
            if (c == 0)
              return run<1, class_width(0), guarded(), counting()>(v, items, items_.class_size(c), counter_.data(), stream);
            if (c == 1)
              return run<1, class_width(1), guarded(), counting()>(v, items, items_.class_size(c), counter_.data() + 1,
                                                                   stream);
            dispatch_r<RMax>(class_targets_per_lane(c), [&](auto r) {
              run<r(), 32, guarded(), counting()>(v, items, items_.class_size(c), counter_.data() + c, stream);
            });
          },
          kFirstClasses);
    });
  }

 private:
  template <int R, unsigned W, bool Guarded, bool Counting>
  static void run(const NearFieldView<T>& v, const PairItem* items, std::uint32_t n, std::uint32_t* next, void* stream) {
    auto kernel = item_kernel<Agent, D, T, R, W, Guarded, Counting>;
    const int threads = 32 * ItemKernelPolicy::warps;
    const unsigned grid = std::min<unsigned>(resident_blocks(kernel, threads, 0),
                                             gpu::div_up(n, ItemKernelPolicy::warps * (32 / W)));
    kernel<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(v, items, n, next);
    NF_CUDA_LAUNCHED();
  }

  // The classes of at most 32 targets (R = 1: quarter, half and whole warps) launch first, then
  // the rest from the biggest items down (plan/class_launcher.h). An item's chain of steps is as
  // long in any class (one step per source), so the small items' few warps, started last, had
  // been the evaluation's tail: on the H100 (float, medians) 2D clusters 2M level 10 1.35 ms
  // against 1.29 with them first, no other input slower.
  static constexpr int kFirstClasses = 3;
  bool hybrid_ = false;
  SmallBoxes small_{0, SmallMax};
  plan::ClassLauncher<PairItemList::kClasses> launcher_;
  PairItemList items_;
  gpu::DeviceBuffer<std::uint32_t> counter_;
};

//! Register-budget cap on R: float keeps 16 targets per lane, double 8 (twice the registers each).
//! At R = 16 in 2D float a pair costs 12 FP32 instructions and one RSQ plus (2 shuffles + 1 load) /
//! 16 (SASS, results/gpu-perf/sass-summary-newton3.txt); n3-rotate ran at 1.43-1.46x bpb's speed at
//! P = 512 on the H100, 95% of the instruction-count bound.
template <class T>
constexpr int max_targets_per_lane() {
  return std::is_same_v<T, float> ? 16 : 8;
}

}  // namespace nf::warp_pairs
