// Particles -> bodies and accelerations -> float64 vectors on the device (one thread per record).
#include "core/cuda_check.cuh"
#include "core/device_bodies.h"
#include "core/launch.cuh"

namespace nf {
namespace {

struct CopyPolicy {
  static constexpr unsigned threads = 256;
};

// Which particle record s reads: order[s], or first + s * stride.
struct Rows {
  const std::uint32_t* order;
  std::size_t first, stride;
  __device__ std::size_t operator()(std::size_t s) const { return order ? order[s] : first + s * stride; }
};

template <int D, class T>
__global__ void gather_kernel(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                              const double* __restrict__ m, Rows rows, std::size_t count, double mass_scale,
                              Body<T>* __restrict__ out) {
  const std::size_t s = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= count) return;
  const std::size_t i = rows(s);
  out[s] = Body<T>{T(x[i]), T(y[i]), D == 3 ? T(z[i]) : T(0), T(m[i] * mass_scale)};
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

template <class T>
void gather(const DeviceParticles& p, Rows rows, std::size_t count, double mass_scale, Body<T>* out) {
  if (count == 0) return;
  gpu::dispatch_dim(p.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    gather_kernel<D, T><<<gpu::blocks_for(count, CopyPolicy::threads), CopyPolicy::threads>>>(
        p.x.data(), p.y.data(), D == 3 ? p.z.data() : nullptr, p.m.data(), rows, count, mass_scale, out);
    NF_CUDA_LAUNCHED();
  });
}

}  // namespace

template <class T>
void gather_bodies(const DeviceParticles& p, const std::uint32_t* order, std::size_t count, Body<T>* bodies) {
  gather<T>(p, Rows{order, 0, 1}, count, 1.0, bodies);
}

template <class T>
void gather_strided_bodies(const DeviceParticles& p, std::size_t first, std::size_t stride, std::size_t count,
                           double mass_scale, Body<T>* bodies) {
  gather<T>(p, Rows{nullptr, first, stride}, count, mass_scale, bodies);
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

#define NF_DEVICE_BODIES(T)                                                                                     \
  template void gather_bodies<T>(const DeviceParticles&, const std::uint32_t*, std::size_t, Body<T>*);         \
  template void gather_strided_bodies<T>(const DeviceParticles&, std::size_t, std::size_t, std::size_t, double, \
                                         Body<T>*);                                                            \
  template void scatter_accelerations<T>(const Acc4<T>*, const std::uint32_t*, DeviceVectors&);
NF_DEVICE_BODIES(float)
NF_DEVICE_BODIES(double)
#undef NF_DEVICE_BODIES

}  // namespace nf
