// The potential energy of a simulation's diagnostics on the GPU: over every pair, or over the near
// field of a tree. Deterministic: fixed reduction trees, block sums added in block order.
#include <numeric>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "methods/potential_gpu.h"
#include "nearfield/traversal.h"
#include "physics/interaction.h"

namespace nf::potential_gpu {
namespace {

struct PotentialPolicy {
  // Sources per shared-memory tile and threads per block (one target per thread), as the tiled
  // all-pairs kernel: the potential costs about what one force evaluation costs, halved by the
  // triangle.
  static constexpr unsigned threads = 256;
  static constexpr int unroll = 16;
};

// Sum of v over the block, in thread 0 (float64; fixed shuffle tree, so deterministic).
__device__ double block_sum(double v) {
  __shared__ double warp_sum[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sum[warp] = v;
  __syncthreads();
  double total = 0.0;
  if (threadIdx.x == 0)
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += warp_sum[w];
  return total;
}

// Block b takes the tile rows b and tiles - 1 - b of the upper triangle of tile pairs (I <= J):
// tiles + 1 tiles of work for every block. Within the diagonal tile only j > i counts.
template <int D, class T>
__global__ void __launch_bounds__(PotentialPolicy::threads)
    allpairs_potential_kernel(const Body<T>* __restrict__ b, std::uint32_t n, std::uint32_t tiles, T eps2,
                              double* __restrict__ block_sums) {
  constexpr std::uint32_t P = PotentialPolicy::threads;
  __shared__ Body<T> tile[P];
  const SoftenedGravity<D, T> g{eps2};
  double sum = 0.0;
  for (int r = 0; r < 2; ++r) {
    const std::uint32_t row = r == 0 ? blockIdx.x : tiles - 1 - blockIdx.x;
    if (r == 1 && row == blockIdx.x) break;  // the middle row of an odd count, once
    const std::uint32_t i = row * P + threadIdx.x;
    const Body<T> bi = i < n ? b[i] : Body<T>{0, 0, 0, 0};  // mass 0: adds nothing
    for (std::uint32_t col = row; col < tiles; ++col) {
      const std::uint32_t j = col * P + threadIdx.x;
      __syncthreads();
      tile[threadIdx.x] = j < n ? b[j] : Body<T>{0, 0, 0, 0};
      __syncthreads();
      T s = 0;
      if (col == row) {
        for (std::uint32_t k = threadIdx.x + 1; k < P; ++k) s += tile[k].m * g.inverse_distance(bi, tile[k]);
      } else {
#pragma unroll PotentialPolicy::unroll
        for (std::uint32_t k = 0; k < P; ++k) s += tile[k].m * g.inverse_distance(bi, tile[k]);  // [~12 flops]
      }
      sum += double(bi.m) * double(s);
    }
  }
  const double total = block_sum(sum);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

template <int D, class T>
__global__ void __launch_bounds__(PotentialPolicy::threads)
    near_potential_kernel(const Body<T>* __restrict__ b, const std::uint32_t* __restrict__ box_first,
                          const std::uint32_t* __restrict__ compact_box, const std::uint32_t* __restrict__ offset,
                          const std::uint32_t* __restrict__ ids, std::uint32_t n, T eps2, double* __restrict__ block_sums) {
  const SoftenedGravity<D, T> g{eps2};
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  double sum = 0.0;
  if (i < n) {
    const Body<T> bi = b[i];
    double s = 0.0;
    for_each_near_source(box_first, offset, ids, compact_box[i], i,
                         [&](std::uint32_t j) { s += double(b[j].m * g.inverse_distance(bi, b[j])); });
    sum = 0.5 * double(bi.m) * s;  // every pair is seen from both of its particles
  }
  const double total = block_sum(sum);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

// -(sum of the block sums, in block order).
double negated_total(const double* block_sums, std::size_t blocks) {
  std::vector<double> host(blocks);
  gpu::copy_to_host(host.data(), block_sums, blocks * sizeof(double));
  return -std::accumulate(host.begin(), host.end(), 0.0);
}

}  // namespace

template <int D, class T>
double allpairs_potential(const Body<T>* bodies, std::size_t n, T eps2, gpu::Workspace& scratch) {
  if (n < 2) return 0.0;
  constexpr std::uint32_t P = PotentialPolicy::threads;
  const std::uint32_t tiles = gpu::div_up(static_cast<std::uint32_t>(n), P), blocks = (tiles + 1) / 2;
  double* sums = static_cast<double*>(scratch.get(blocks * sizeof(double)));
  allpairs_potential_kernel<D, T><<<blocks, P>>>(bodies, static_cast<std::uint32_t>(n), tiles, eps2, sums);
  NF_CUDA_LAUNCHED();
  return negated_total(sums, blocks);
}

template <int D, class T>
double near_field_potential(const Body<T>* sorted, const DeviceTree& t, T eps2, gpu::Workspace& scratch) {
  if (t.n < 2) return 0.0;
  constexpr unsigned P = PotentialPolicy::threads;
  const unsigned blocks = gpu::blocks_for(t.n, P);
  double* sums = static_cast<double*>(scratch.get(blocks * sizeof(double)));
  near_potential_kernel<D, T><<<blocks, P>>>(sorted, t.box_first.data(), t.particle_compact_box.data(),
                                             t.near_full_offset.data(), t.near_full_ids.data(), t.n, eps2, sums);
  NF_CUDA_LAUNCHED();
  return negated_total(sums, blocks);
}

#define NF_POTENTIALS(D, T)                                                                                 \
  template double allpairs_potential<D, T>(const Body<T>*, std::size_t, T, gpu::Workspace&);             \
  template double near_field_potential<D, T>(const Body<T>*, const DeviceTree&, T, gpu::Workspace&);
NF_POTENTIALS(2, float)
NF_POTENTIALS(3, float)
NF_POTENTIALS(2, double)
NF_POTENTIALS(3, double)
#undef NF_POTENTIALS

}  // namespace nf::potential_gpu
