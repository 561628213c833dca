// bpt (box per thread), a mapping strategy of the paper's reference [1]: one thread owns a box
// and computes each of its particles in turn against the box and the neighbor boxes, from global
// memory. Only one thread per box: the GPU is starved unless there are very many boxes.
#include "common/interaction.h"
#include "nearfield/box_tiles.cuh"

namespace nf {
namespace {

struct BptPolicy {
  static constexpr int threads = 64;  // small blocks spread the few threads over more SMs
};

template <int D, class T, bool Guarded, bool Counting>
__global__ void __launch_bounds__(BptPolicy::threads) bpt_kernel(NearFieldView<T> v) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= v.nonempty_count) return;
  const SoftenedGravity<D, T, Guarded> g{v.eps2};
  const std::uint32_t box = v.nonempty[t];
  const box_tiles::BoxRange own = box_tiles::box_range(v.box_start, box);
  const std::uint32_t nb_begin = v.neighbor_offset[box], nb_end = v.neighbor_offset[box + 1];
  unsigned long long count = 0;
  for (std::uint32_t i = own.begin; i < own.end; ++i) {
    const Body<T> me = v.bodies[i];
    Acc4<T> a{0, 0, 0, 0};
    for (std::uint32_t j = own.begin; j < own.end; ++j) {
      if (j == i) continue;
      g(me, v.bodies[j], a);
      if constexpr (Counting) ++count;
    }
    for (std::uint32_t k = nb_begin; k < nb_end; ++k) {
      const box_tiles::BoxRange nb = box_tiles::box_range(v.box_start, v.neighbor_ids[k]);
      for (std::uint32_t j = nb.begin; j < nb.end; ++j) {
        g(me, v.bodies[j], a);
        if constexpr (Counting) ++count;
      }
    }
    v.acc[i] = a;
  }
  if constexpr (Counting) box_tiles::add_count(v.counter, count);
}

}  // namespace

template <int D, class T>
void launch_bpt(const NearFieldView<T>& v) {
  if (v.nonempty_count == 0) return;
  const unsigned grid = gpu::div_up(v.nonempty_count, BptPolicy::threads);
  if (v.counter)
    bpt_kernel<D, T, true, true><<<grid, BptPolicy::threads>>>(v);
  else
    gpu::dispatch_bool(v.guarded, [&](auto guarded) { bpt_kernel<D, T, guarded(), false><<<grid, BptPolicy::threads>>>(v); });
  NF_CUDA_LAUNCHED();
}

template void launch_bpt<2, float>(const NearFieldView<float>&);
template void launch_bpt<3, float>(const NearFieldView<float>&);
template void launch_bpt<2, double>(const NearFieldView<double>&);
template void launch_bpt<3, double>(const NearFieldView<double>&);

}  // namespace nf
