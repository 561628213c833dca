// The sorted bodies every GPU near-field kernel reads: bodies[s] = particle order[s], in T.
#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/tree_gpu.h"

namespace nf {
namespace {

struct GatherPolicy {
  static constexpr unsigned threads = 256;
};

template <int D, class T>
__global__ void gather_kernel(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                              const double* __restrict__ m, const std::uint32_t* __restrict__ order, std::uint32_t n,
                              Body<T>* __restrict__ bodies) {
  const std::uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const std::uint32_t i = order[s];
  bodies[s] = Body<T>{T(x[i]), T(y[i]), D == 3 ? T(z[i]) : T(0), T(m[i])};
}

}  // namespace

template <class T>
void gather_bodies(const DeviceParticles& p, const DeviceTree& t, gpu::DeviceBuffer<Body<T>>& bodies) {
  if (bodies.size() != t.n) bodies = gpu::DeviceBuffer<Body<T>>(t.n);
  if (t.n == 0) return;
  gpu::dispatch_dim(t.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    gather_kernel<D, T><<<gpu::blocks_for(t.n, GatherPolicy::threads), GatherPolicy::threads>>>(
        p.x.data(), p.y.data(), D == 3 ? p.z.data() : nullptr, p.m.data(), t.order.data(), t.n, bodies.data());
    NF_CUDA_LAUNCHED();
  });
}

template void gather_bodies<float>(const DeviceParticles&, const DeviceTree&, gpu::DeviceBuffer<Body<float>>&);
template void gather_bodies<double>(const DeviceParticles&, const DeviceTree&, gpu::DeviceBuffer<Body<double>>&);

}  // namespace nf
