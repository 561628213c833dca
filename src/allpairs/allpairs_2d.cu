// allpairs-2d: the 2D-tiled scheme of 004_efc2d18ad8f67007.txt. The N x N interaction grid is
// cut along both axes: blockIdx.x picks p target bodies (one per thread) and blockIdx.y picks a
// slice of the sources, walked in shared-memory tiles of p bodies. Each block writes its partial
// sums; a second kernel adds the slices of each body in a fixed order (deterministic). Several
// threads thus work on one body, which fills the GPU at small N where the tiled kernel cannot.
// The report found one thread column per block best; that is the layout used here.
#include <algorithm>

#include "allpairs/allpairs_gpu.h"
#include "allpairs/source_loop.cuh"
#include "core/launch.cuh"

namespace nf {
namespace {

struct TwoDPolicy {
  static constexpr int threads = 128;    // p: targets per block and sources per tile
  static constexpr int unroll = 16;
  static constexpr int max_slices = 64;  // bounds the partial-sum buffer to 64 N accelerations
  static constexpr int waves = 2;        // slice until the grid covers the GPU this many times
};

template <int D, class T, bool Guarded, bool Masked>
__global__ void __launch_bounds__(TwoDPolicy::threads)
    slice_kernel(AllPairsView<T> v, std::uint32_t slice_len, Acc4<T>* __restrict__ partial, bool into_acc) {
  constexpr int P = TwoDPolicy::threads;
  __shared__ Body<T> tile[P];
  __shared__ Cell tile_cells[Masked ? P : 1];
  const SoftenedGravity<D, T, Guarded> g{v.eps2};
  const std::uint32_t i = blockIdx.x * P + threadIdx.x;
  auto t = allpairs_detail::load_target<D, T, Guarded, Masked>(v.bodies, v.cells, i, v.n);
  const std::uint32_t begin = blockIdx.y * slice_len, end = min(v.source_count, begin + slice_len);
  for (std::uint32_t base = begin; base < end; base += P) {
    const std::uint32_t j = base + threadIdx.x;
    if (j < end) {
      tile[threadIdx.x] = v.sources[j];
      if constexpr (Masked) tile_cells[threadIdx.x] = v.cells[j];
    }
    __syncthreads();
    const std::uint32_t count = min(static_cast<std::uint32_t>(P), end - base);
    if (count == P) {
#pragma unroll TwoDPolicy::unroll
      for (int k = 0; k < P; ++k) t.add(g, tile[k], Masked ? tile_cells[k] : Cell{});
    } else {
      for (std::uint32_t k = 0; k < count; ++k) t.add(g, tile[k], Masked ? tile_cells[k] : Cell{});
    }
    __syncthreads();
  }
  if (i >= v.n) return;
  if (into_acc)  // one slice: the result itself, added into acc
    add_into(partial + i, t.acc);
  else
    partial[std::size_t(blockIdx.y) * v.n + i] = t.acc;
}

template <class T>
__global__ void reduce_slices_kernel(const Acc4<T>* __restrict__ partial, std::uint32_t slices, std::uint32_t n,
                                     Acc4<T>* __restrict__ acc) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Acc4<T> a = partial[i];
  for (std::uint32_t s = 1; s < slices; ++s) {
    const Acc4<T> p = partial[std::size_t(s) * n + i];
    a.x += p.x;
    a.y += p.y;
    a.z += p.z;
  }
  add_into(acc + i, a);
}

std::uint32_t slice_length(std::uint32_t n, std::uint32_t slices) {
  constexpr std::uint32_t P = TwoDPolicy::threads;
  return gpu::div_up(gpu::div_up(n, slices), P) * P;  // whole tiles per slice
}

}  // namespace

std::uint32_t allpairs_2d_slices(std::uint32_t n, std::uint32_t sources) {
  if (n == 0 || sources == 0) return 1;
  constexpr std::uint32_t P = TwoDPolicy::threads;
  const std::uint32_t target_blocks = TwoDPolicy::waves * gpu::sm_count() * (2048 / P);
  std::uint32_t slices = std::clamp<std::uint32_t>(gpu::div_up(target_blocks, gpu::div_up(n, P)), 1, TwoDPolicy::max_slices);
  return gpu::div_up(sources, slice_length(sources, slices));  // no empty slice
}

template <int D, class T>
void allpairs_2d(const AllPairsView<T>& view) {
  if (view.n == 0) return;
  const AllPairsView<T> v = with_sources(view);
  constexpr std::uint32_t P = TwoDPolicy::threads;
  const std::uint32_t slices = allpairs_2d_slices(v.n, v.source_count), len = slice_length(v.source_count, slices);
  Acc4<T>* partial =
      slices > 1 ? static_cast<Acc4<T>*>(v.workspace->get(std::size_t(slices) * v.n * sizeof(Acc4<T>))) : nullptr;
  // One slice needs no reduction: the block's sums are the result.
  Acc4<T>* out = slices == 1 ? v.acc : partial;
  gpu::dispatch_bool(v.guarded, [&](auto guarded) {
    gpu::dispatch_bool(v.cells != nullptr, [&](auto masked) {
      slice_kernel<D, T, guarded(), masked()><<<dim3(gpu::div_up(v.n, P), slices), P>>>(v, len, out, slices == 1);
    });
  });
  NF_CUDA_LAUNCHED();
  if (slices > 1) {
    reduce_slices_kernel<T><<<gpu::div_up(v.n, 256), 256>>>(partial, slices, v.n, v.acc);
    NF_CUDA_LAUNCHED();
  }
}

NF_EXPORT_GPU_ALL_PAIRS(allpairs_2d, allpairs_2d)

}  // namespace nf
