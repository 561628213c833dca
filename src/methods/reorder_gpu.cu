// A simulation's state moved into a tree's order on the GPU (the near-field methods' in-place prepare).
#include <utility>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "methods/reorder_gpu.h"

namespace nf::reorder_gpu {
namespace {

struct CopyPolicy {
  static constexpr unsigned threads = 256;
};

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

}  // namespace

template <class T>
void reorder_state(const std::uint32_t* order, DeviceParticles& p, DeviceVectors& v,
                   gpu::DeviceBuffer<std::uint32_t>& index, StateSpare& spare, Body<T>* bodies) {
  const std::size_t n = p.n;
  if (n == 0) return;
  if (spare.index.size() != n) {
    spare.p = DeviceParticles(p.dim, n);
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
  // The bounds stay with the state: a permutation keeps them; the spare's arrays are stale.
  std::swap(p.bounds, spare.p.bounds);
  p.bounds_valid = spare.p.bounds_valid;
  spare.p.bounds_valid = false;
  std::swap(v, spare.v);
  std::swap(index, spare.index);
}

template void reorder_state<float>(const std::uint32_t*, DeviceParticles&, DeviceVectors&,
                                   gpu::DeviceBuffer<std::uint32_t>&, StateSpare&, Body<float>*);
template void reorder_state<double>(const std::uint32_t*, DeviceParticles&, DeviceVectors&,
                                    gpu::DeviceBuffer<std::uint32_t>&, StateSpare&, Body<double>*);

}  // namespace nf::reorder_gpu
