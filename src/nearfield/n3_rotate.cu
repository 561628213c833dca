// n3-rotate: Newton's third law with lane rotation (rotate_agent.cuh) over bounded work items
// (pair_items.cuh), one warp per item; reactions and forces go to global memory with atomics
// (red.global.add at distinct addresses across a warp).
#include "nearfield/n3_common.cuh"
#include "nearfield/rotate_agent.cuh"

namespace nf {

template <int D, class T>
using N3Rotate = warp_pairs::ItemKernel<D, T, warp_pairs::max_targets_per_lane<T>(), RotateAgent>;

NF_EXPORT_GPU_NEAR_FIELD(n3_rotate, N3Rotate)

}  // namespace nf
