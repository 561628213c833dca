// n3-rotate: Newton's third law with lane rotation (rotate_agent.cuh) over bounded work items
// (pair_items.cuh), one warp per item; reactions and forces go to global memory with atomics
// (red.global.add at distinct addresses across a warp).
#include "nearfield/n3_common.cuh"
#include "nearfield/rotate_agent.cuh"

namespace nf {

template <int D, class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_n3_rotate() {
  return std::make_unique<warp_pairs::ItemKernel<D, T, warp_pairs::max_targets_per_lane<T>(), RotateAgent>>();
}

NF_INSTANTIATE_MAKER(make_n3_rotate, GpuNearFieldKernel)

}  // namespace nf
