// bpt (box per thread), a mapping strategy of the paper's reference [1]: one thread owns a box
// and computes each of its particles in turn against the box and the neighbor boxes, from global
// memory. Only one thread per box: the GPU is starved unless there are very many boxes.
#include "physics/interaction.h"
#include "nearfield/box_tiles.cuh"
#include "nearfield/traversal.h"

namespace nf {
namespace {

struct BptPolicy {
  static constexpr int threads = 64;  // small blocks spread the few threads over more SMs
};

template <int D, class T, bool Guarded, bool Counting>
__global__ void __launch_bounds__(BptPolicy::threads) bpt_kernel(NearFieldView<T> v) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= v.computed_boxes) return;
  const SoftenedGravity<D, T, Guarded> g{v.eps2};
  const std::uint32_t box = v.nonempty[t];
  unsigned long long count = 0;
  for (std::uint32_t i = v.box_start[box]; i < v.box_start[box + 1]; ++i) {
    const Acc4<T> a = near_field_sum<Counting>(g, v.bodies, v.box_start, v.neighbor_offset, v.neighbor_ids, box, i,
                                               count);
    v.acc[i] = v.acc_zero ? a : plus(v.acc[i], a);  // adds into the output (core/body.h)
  }
  if constexpr (Counting) box_tiles::add_count(v.counter, count);
}

}  // namespace

template <int D, class T>
void launch_bpt(const NearFieldView<T>& v) {
  if (v.computed_boxes == 0) return;
  const unsigned grid = gpu::div_up(v.computed_boxes, BptPolicy::threads);
  gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) {
    bpt_kernel<D, T, guarded(), counting()><<<grid, BptPolicy::threads>>>(v);
  });
  NF_CUDA_LAUNCHED();
}

NF_EXPORT_GPU_NEAR_FIELD_DRIVER(bpt, launch_bpt)

}  // namespace nf
