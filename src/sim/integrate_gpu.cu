// Kicks and drifts of the leapfrog on the GPU: one thread per particle, float64.
#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "sim/integrate_gpu.h"

#include <utility>

namespace nf::sim_gpu {
namespace {

struct IntegratePolicy {
  static constexpr unsigned threads = 256;
};

// Pointers of one axis.
struct Axis {
  double* x;        // position (null for a kick)
  double* v;
  const double* a;
};

template <int D, bool Drift>
__global__ void step_kernel(Axis ax, Axis ay, Axis az, std::size_t n, double h, double dt) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Axis axes[3] = {ax, ay, az};
#pragma unroll
  for (int d = 0; d < D; ++d) {
    // Rounded products and sums, never contracted into an FMA: the same arithmetic as the host
    // leapfrog (sim/state.cc; C++17 without extensions does not contract), so a run on the GPU and
    // one whose forces come back to the host (simulate --gpus G) follow bitwise the same
    // trajectory from bitwise the same forces.
    const double v = __dadd_rn(axes[d].v[i], __dmul_rn(axes[d].a[i], h));  // kick
    axes[d].v[i] = v;
    if constexpr (Drift) axes[d].x[i] = __dadd_rn(axes[d].x[i], __dmul_rn(v, dt));  // drift
  }
}

template <bool Drift>
void launch(int dim, std::size_t n, Axis ax, Axis ay, Axis az, double h, double dt) {
  if (n == 0) return;
  gpu::dispatch_dim(dim, [&](auto d) {
    step_kernel<decltype(d)::value, Drift>
        <<<gpu::blocks_for(n, IntegratePolicy::threads), IntegratePolicy::threads>>>(ax, ay, az, n, h, dt);
    NF_CUDA_LAUNCHED();
  });
}

// out[index[s]] = in[s] for one float64 array.
__global__ void scatter_kernel(const double* __restrict__ in, const std::uint32_t* __restrict__ index, std::size_t n,
                               double* __restrict__ out) {
  const std::size_t s = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < n) out[index[s]] = in[s];
}

__global__ void identity_kernel(std::uint32_t* __restrict__ index, std::size_t n) {
  const std::size_t s = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < n) index[s] = static_cast<std::uint32_t>(s);
}

void scatter(gpu::DeviceBuffer<double>& a, const gpu::DeviceBuffer<std::uint32_t>& index) {
  if (a.size() == 0) return;
  gpu::DeviceBuffer<double> out(a.size());
  scatter_kernel<<<gpu::blocks_for(a.size(), IntegratePolicy::threads), IntegratePolicy::threads>>>(
      a.data(), index.data(), a.size(), out.data());
  NF_CUDA_LAUNCHED();
  a = std::move(out);  // the old array is freed after the kernel: cudaFree waits for the device
}

}  // namespace

void restore_input_order(DeviceParticles& p, DeviceVectors& v, DeviceVectors& acc, gpu::DeviceBuffer<std::uint32_t>& index) {
  if (p.n == 0) return;
  for (gpu::DeviceBuffer<double>* a : {&p.x, &p.y, &p.z, &p.m, &v.x, &v.y, &v.z, &acc.x, &acc.y, &acc.z}) scatter(*a, index);
  identity_kernel<<<gpu::blocks_for(p.n, IntegratePolicy::threads), IntegratePolicy::threads>>>(index.data(), p.n);
  NF_CUDA_LAUNCHED();
}

void kick(DeviceVectors& v, const DeviceVectors& a, double h) {
  launch<false>(v.dim, v.n, {nullptr, v.x.data(), a.x.data()}, {nullptr, v.y.data(), a.y.data()},
                {nullptr, v.z.data(), a.z.data()}, h, 0.0);
}

void kick_drift(DeviceParticles& p, DeviceVectors& v, const DeviceVectors& a, double h, double dt) {
  launch<true>(v.dim, v.n, {p.x.data(), v.x.data(), a.x.data()}, {p.y.data(), v.y.data(), a.y.data()},
               {p.z.data(), v.z.data(), a.z.data()}, h, dt);
}

}  // namespace nf::sim_gpu
