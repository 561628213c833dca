// The device side of the GPU force fields: packing bodies, scattering accelerations, and the
// potential energy (diagnostics) over all pairs or over the near field of a tree.
#include <numeric>
#include <utility>
#include <vector>

#include "core/cuda_check.cuh"
#include "physics/interaction.h"
#include "core/launch.cuh"
#include "methods/field_gpu.h"
#include "nearfield/traversal.h"

namespace nf::field_gpu {
namespace {

struct CopyPolicy {
  static constexpr unsigned threads = 256;
};

struct PotentialPolicy {
  // Sources per shared-memory tile and threads per block (one target per thread), as the tiled
  // all-pairs kernel: the potential costs about what one force evaluation costs, halved by the
  // triangle.
  static constexpr unsigned threads = 256;
  static constexpr int unroll = 16;
};

template <int D, class T>
__global__ void pack_kernel(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                            const double* __restrict__ m, std::size_t first, std::size_t stride, std::size_t count,
                            double mass_scale, Body<T>* __restrict__ out) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const std::size_t j = first + i * stride;
  out[i] = Body<T>{T(x[j]), T(y[j]), D == 3 ? T(z[j]) : T(0), T(m[j] * mass_scale)};
}

template <int D, class T>
__global__ void scatter_kernel(const Acc4<T>* __restrict__ acc, const std::uint32_t* __restrict__ order, std::size_t n,
                               double* __restrict__ ax, double* __restrict__ ay, double* __restrict__ az) {
  const std::size_t s = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const std::size_t i = order ? order[s] : s;
  const Acc4<T> a = acc[s];
  ax[i] = a.x;
  ay[i] = a.y;
  if constexpr (D == 3) az[i] = a.z;
}

// One state array per pointer (null: an axis the dimension lacks).
struct StateArrays {
  double *x, *y, *z, *m, *vx, *vy, *vz;
  std::uint32_t* index;
};

template <int D, class T>
__global__ void reorder_kernel(StateArrays in, StateArrays out, const std::uint32_t* __restrict__ order,
                               std::size_t n, Body<T>* __restrict__ bodies) {
  const std::size_t s = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const std::size_t i = order[s];
  const double x = in.x[i], y = in.y[i], z = D == 3 ? in.z[i] : 0.0, m = in.m[i];
  out.x[s] = x;
  out.y[s] = y;
  out.m[s] = m;
  out.vx[s] = in.vx[i];
  out.vy[s] = in.vy[i];
  if constexpr (D == 3) {
    out.z[s] = z;
    out.vz[s] = in.vz[i];
  }
  out.index[s] = in.index[i];
  bodies[s] = Body<T>{T(x), T(y), T(z), T(m)};
}

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
                          const std::uint32_t* __restrict__ slot, const std::uint32_t* __restrict__ offset,
                          const std::uint32_t* __restrict__ ids, std::uint32_t n, T eps2, double* __restrict__ block_sums) {
  const SoftenedGravity<D, T> g{eps2};
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  double sum = 0.0;
  if (i < n) {
    const Body<T> bi = b[i];
    double s = 0.0;
    for_each_near_source(box_first, offset, ids, slot[i], i,
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

template <class T>
void pack_bodies(const DeviceParticles& p, std::size_t first, std::size_t stride, std::size_t count, double mass_scale,
                 Body<T>* out) {
  if (count == 0) return;
  gpu::dispatch_dim(p.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    pack_kernel<D, T><<<gpu::blocks_for(count, CopyPolicy::threads), CopyPolicy::threads>>>(
        p.x.data(), p.y.data(), D == 3 ? p.z.data() : nullptr, p.m.data(), first, stride, count, mass_scale, out);
    NF_CUDA_LAUNCHED();
  });
}

template <class T>
void scatter_accelerations(const Acc4<T>* acc, const std::uint32_t* order, DeviceVectors& out) {
  if (out.n == 0) return;
  gpu::dispatch_dim(out.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    scatter_kernel<D, T><<<gpu::blocks_for(out.n, CopyPolicy::threads), CopyPolicy::threads>>>(
        acc, order, out.n, out.x.data(), out.y.data(), D == 3 ? out.z.data() : nullptr);
    NF_CUDA_LAUNCHED();
  });
}

template <class T>
void reorder_state(const std::uint32_t* order, DeviceParticles& p, DeviceVectors& v,
                   gpu::DeviceBuffer<std::uint32_t>& index, StateSpare& spare, Body<T>* bodies) {
  const std::size_t n = p.n;
  if (n == 0) return;
  if (spare.index.size() != n) {
    spare.p = DeviceParticles{p.dim, n, gpu::DeviceBuffer<double>(n), gpu::DeviceBuffer<double>(n),
                              gpu::DeviceBuffer<double>(p.dim == 3 ? n : 0), gpu::DeviceBuffer<double>(n)};
    spare.v = DeviceVectors(p.dim, n);
    spare.index = gpu::DeviceBuffer<std::uint32_t>(n);
  }
  auto arrays = [](DeviceParticles& q, DeviceVectors& w, gpu::DeviceBuffer<std::uint32_t>& k) {
    return StateArrays{q.x.data(), q.y.data(), q.z.data(), q.m.data(), w.x.data(), w.y.data(), w.z.data(), k.data()};
  };
  gpu::dispatch_dim(p.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    reorder_kernel<D, T><<<gpu::blocks_for(n, CopyPolicy::threads), CopyPolicy::threads>>>(
        arrays(p, v, index), arrays(spare.p, spare.v, spare.index), order, n, bodies);
    NF_CUDA_LAUNCHED();
  });
  std::swap(p, spare.p);
  std::swap(v, spare.v);
  std::swap(index, spare.index);
}

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
  near_potential_kernel<D, T><<<blocks, P>>>(sorted, t.box_first.data(), t.particle_slot.data(),
                                             t.near_full_offset.data(), t.near_full_ids.data(), t.n, eps2, sums);
  NF_CUDA_LAUNCHED();
  return negated_total(sums, blocks);
}

template void pack_bodies<float>(const DeviceParticles&, std::size_t, std::size_t, std::size_t, double, Body<float>*);
template void pack_bodies<double>(const DeviceParticles&, std::size_t, std::size_t, std::size_t, double, Body<double>*);
template void reorder_state<float>(const std::uint32_t*, DeviceParticles&, DeviceVectors&,
                                   gpu::DeviceBuffer<std::uint32_t>&, StateSpare&, Body<float>*);
template void reorder_state<double>(const std::uint32_t*, DeviceParticles&, DeviceVectors&,
                                    gpu::DeviceBuffer<std::uint32_t>&, StateSpare&, Body<double>*);
template void scatter_accelerations<float>(const Acc4<float>*, const std::uint32_t*, DeviceVectors&);
template void scatter_accelerations<double>(const Acc4<double>*, const std::uint32_t*, DeviceVectors&);
#define NF_POTENTIALS(D, T)                                                                                 \
  template double allpairs_potential<D, T>(const Body<T>*, std::size_t, T, gpu::Workspace&);             \
  template double near_field_potential<D, T>(const Body<T>*, const DeviceTree&, T, gpu::Workspace&);
NF_POTENTIALS(2, float)
NF_POTENTIALS(3, float)
NF_POTENTIALS(2, double)
NF_POTENTIALS(3, double)
#undef NF_POTENTIALS

}  // namespace nf::field_gpu
