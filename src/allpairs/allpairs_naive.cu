// allpairs-naive: one thread per body; every source is read from global memory (through the
// caches) with no shared-memory staging. The baseline the tiled kernels are measured against.
#include "allpairs/allpairs_gpu.h"
#include "allpairs/source_loop.cuh"
#include "core/launch.cuh"

namespace nf {
namespace {

struct NaivePolicy {
  static constexpr int threads = 256;
};

template <int D, class T, bool Guarded, bool Masked>
__global__ void __launch_bounds__(NaivePolicy::threads) naive_kernel(AllPairsView<T> v) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= v.n) return;
  const SoftenedGravity<D, T, Guarded> g{v.eps2};
  auto t = allpairs_detail::load_target<D, T, Guarded, Masked>(v.bodies, v.cells, i, v.n);
  for (std::uint32_t j = 0; j < v.source_count; ++j) t.add(g, v.sources[j], Masked ? v.cells[j] : Cell{});
  add_into(v.acc + i, t.acc);
}

}  // namespace

template <int D, class T>
void allpairs_naive(const AllPairsView<T>& view) {
  if (view.n == 0) return;
  const AllPairsView<T> v = with_sources(view);
  gpu::dispatch_bool(v.guarded, [&](auto guarded) {
    gpu::dispatch_bool(v.cells != nullptr, [&](auto masked) {
      naive_kernel<D, T, guarded(), masked()>
          <<<gpu::div_up(v.n, NaivePolicy::threads), NaivePolicy::threads>>>(v);
    });
  });
  NF_CUDA_LAUNCHED();
}

NF_EXPORT_GPU_ALL_PAIRS(allpairs_naive, allpairs_naive)

}  // namespace nf
