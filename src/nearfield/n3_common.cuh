#pragma once
// The launch side shared by the Newton-3 warp kernels: the plan (work items sized to the boxes)
// and the dispatch of the runtime choices (targets per lane R, guarded, counting) to template
// instantiations of a kernel.
#include <algorithm>

#include "common/cuda_check.cuh"
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

//! A Newton-3 warp kernel of this family: its plan is the item list for chunks of 32 R targets.
//! `Launch<D, T, R, Guarded, Counting>::run(view, items, count, counter)` launches it.
template <int D, class T, int RMax, template <int, class, int, bool, bool> class Launch>
class ItemKernel final : public GpuNearFieldKernel<T> {
 public:
  void plan(const NearFieldView<T>& v) override {
    r_ = targets_per_lane(v.max_box_count, RMax);
    items_.build(v.box_start, v.nonempty, v.nonempty_count, v.neighbor_offset, v.neighbor_ids, 32u * r_);
    if (counter_.size() == 0) counter_ = gpu::DeviceBuffer<std::uint32_t>(1);
  }
  void launch(const NearFieldView<T>& v) override {
    if (items_.size() == 0) return;
    counter_.fill(0);
    dispatch_r<RMax>(r_, [&](auto r) {
      if (v.counter)
        Launch<D, T, r(), true, true>::run(v, items_.items(), items_.size(), counter_.data());
      else
        gpu::dispatch_bool(v.guarded, [&](auto guarded) {
          Launch<D, T, r(), guarded(), false>::run(v, items_.items(), items_.size(), counter_.data());
        });
    });
  }

 private:
  int r_ = 1;
  PairItemList items_;
  gpu::DeviceBuffer<std::uint32_t> counter_;
};

//! Register-budget cap on R: float keeps 16 targets per lane, double 8 (twice the registers each).
template <class T>
constexpr int max_targets_per_lane() {
  return std::is_same_v<T, float> ? 16 : 8;
}

}  // namespace nf::warp_pairs
