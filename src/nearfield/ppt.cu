// ppt (particle per thread), a mapping strategy of the paper's reference [1]: thread i computes
// sorted particle i against the other particles of its box and of each neighbor box, reading
// them straight from global memory (the caches are the only reuse).
#include "physics/interaction.h"
#include "nearfield/box_tiles.cuh"
#include "nearfield/traversal.h"

namespace nf {
namespace {

struct PptPolicy {
  static constexpr int threads = 256;
};

template <int D, class T, bool Guarded, bool Counting>
__global__ void __launch_bounds__(PptPolicy::threads) ppt_kernel(NearFieldView<T> v) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= v.n) return;
  const SoftenedGravity<D, T, Guarded> g{v.eps2};
  const std::uint32_t box = v.particle_box[i];
  unsigned long long count = 0;
  const Acc4<T> a = near_field_sum<Counting>(g, v.bodies, v.box_start, v.neighbor_offset, v.neighbor_ids, box, i, count);
  v.acc[i] = v.acc_zero ? a : plus(v.acc[i], a);  // adds into the output (core/body.h)
  if constexpr (Counting) box_tiles::add_count(v.counter, count);
}

}  // namespace

template <int D, class T>
void launch_ppt(const NearFieldView<T>& v) {
  if (v.n == 0) return;
  const unsigned grid = gpu::div_up(v.n, PptPolicy::threads);
  gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) {
    ppt_kernel<D, T, guarded(), counting()><<<grid, PptPolicy::threads>>>(v);
  });
  NF_CUDA_LAUNCHED();
}

NF_EXPORT_GPU_NEAR_FIELD_DRIVER(ppt, launch_ppt)

}  // namespace nf
