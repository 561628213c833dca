// ppt (particle per thread), a mapping strategy of the paper's reference [1]: thread i computes
// sorted particle i against the other particles of its box and of each neighbor box, reading
// them straight from global memory (the caches are the only reuse).
#include "common/interaction.h"
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
  const Body<T> me = v.bodies[i];
  Acc4<T> a{0, 0, 0, 0};
  unsigned long long count = 0;

  for_each_near_source(v.box_start, v.neighbor_offset, v.neighbor_ids, box, i, [&](std::uint32_t j) {
    g(me, v.bodies[j], a);
    if constexpr (Counting) ++count;
  });
  v.acc[i] = a;
  if constexpr (Counting) box_tiles::add_count(v.counter, count);
}

}  // namespace

template <int D, class T>
void launch_ppt(const NearFieldView<T>& v) {
  if (v.n == 0) return;
  const unsigned grid = gpu::div_up(v.n, PptPolicy::threads);
  if (v.counter)
    ppt_kernel<D, T, true, true><<<grid, PptPolicy::threads>>>(v);
  else
    gpu::dispatch_bool(v.guarded, [&](auto guarded) { ppt_kernel<D, T, guarded(), false><<<grid, PptPolicy::threads>>>(v); });
  NF_CUDA_LAUNCHED();
}

template void launch_ppt<2, float>(const NearFieldView<float>&);
template void launch_ppt<3, float>(const NearFieldView<float>&);
template void launch_ppt<2, double>(const NearFieldView<double>&);
template void launch_ppt<3, double>(const NearFieldView<double>&);

}  // namespace nf
