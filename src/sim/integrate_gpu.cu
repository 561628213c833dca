// Kicks and drifts of the leapfrog on the GPU: grid-stride loops over the particles, float64.
#include "core/body.h"
#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "core/ordered_bits.cuh"
#include "sim/integrate_gpu.h"

#include <algorithm>
#include <utility>

namespace nf::sim_gpu {
namespace {

struct IntegratePolicy {
  static constexpr unsigned threads = 256;
  static constexpr unsigned max_blocks = 1024;  // the step kernel's grid-stride loop: enough to fill the GPU
};

// Pointers of one axis.
struct Axis {
  double* x;  // position (null for a kick)
  double* v;
};

// The accelerations as float64 vectors.
struct VectorAcc {
  const double *x, *y, *z;
  template <int D>
  __device__ void load(std::size_t i, double* a) const {
    a[0] = x[i];
    a[1] = y[i];
    if constexpr (D == 3) a[2] = z[i];
  }
};

// The accelerations as a method's Acc4 rows (one vector load; float widens exactly to double).
template <class T>
struct RowAcc {
  const Acc4<T>* rows;
  template <int D>
  __device__ void load(std::size_t i, double* a) const {
    const Acc4<T> r = rows[i];
    a[0] = r.x;
    a[1] = r.y;
    if constexpr (D == 3) a[2] = r.z;
  }
};

// A grid-stride loop over the particles. A drift also reduces the new positions' bounds into
// *bounds (reset before the launch), so that the next tree build needs no pass of its own: one
// pair of atomics per block and axis.
template <int D, bool Drift, class A>
__global__ void step_kernel(Axis ax, Axis ay, Axis az, A acc, std::size_t n, double h_before, double h, double dt,
                            PositionBounds* bounds) {
  const Axis axes[3] = {ax, ay, az};
  gpu::BoundsAccumulator<D> box;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    double a[3];
    acc.template load<D>(i, a);
#pragma unroll
    for (int d = 0; d < D; ++d) {
      // Rounded products and sums, never contracted into an FMA: the same arithmetic as the host
      // leapfrog (sim/state.cc; C++17 without extensions does not contract), so a run on the GPU and
      // one whose forces come back to the host (simulate --gpus G) follow bitwise the same
      // trajectory from bitwise the same forces. A deferred kick is its own rounded step.
      double v = axes[d].v[i];
      if (h_before != 0.0) v = __dadd_rn(v, __dmul_rn(a[d], h_before));  // the previous step's kick
      v = __dadd_rn(v, __dmul_rn(a[d], h));                               // kick
      axes[d].v[i] = v;
      if constexpr (Drift) {
        const double x = __dadd_rn(axes[d].x[i], __dmul_rn(v, dt));  // drift
        axes[d].x[i] = x;
        box.add(d, x);
      }
    }
  }
  if constexpr (Drift) box.add_block_to(bounds);
}

__global__ void reset_bounds_kernel(PositionBounds* b) { gpu::reset_bounds(b); }

template <bool Drift>
void launch(int dim, std::size_t n, Axis ax, Axis ay, Axis az, const KickAcc& a, double h_before, double h, double dt,
            PositionBounds* bounds = nullptr) {
  if (n == 0) return;
  const unsigned grid = std::min(gpu::blocks_for(n, IntegratePolicy::threads), IntegratePolicy::max_blocks);
  const unsigned threads = IntegratePolicy::threads;
  gpu::dispatch_dim(dim, [&](auto d) {
    constexpr int D = decltype(d)::value;
    if (a.vectors) {
      const VectorAcc acc{a.vectors->x.data(), a.vectors->y.data(), D == 3 ? a.vectors->z.data() : nullptr};
      step_kernel<D, Drift><<<grid, threads>>>(ax, ay, az, acc, n, h_before, h, dt, bounds);
    } else if (a.double_rows) {
      step_kernel<D, Drift><<<grid, threads>>>(ax, ay, az, RowAcc<double>{static_cast<const Acc4<double>*>(a.rows)}, n,
                                               h_before, h, dt, bounds);
    } else {
      step_kernel<D, Drift><<<grid, threads>>>(ax, ay, az, RowAcc<float>{static_cast<const Acc4<float>*>(a.rows)}, n,
                                               h_before, h, dt, bounds);
    }
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

void kick(DeviceVectors& v, const KickAcc& a, double h) {
  launch<false>(v.dim, v.n, {nullptr, v.x.data()}, {nullptr, v.y.data()}, {nullptr, v.z.data()}, a, 0.0, h, 0.0);
}

void kick_drift(DeviceParticles& p, DeviceVectors& v, const KickAcc& a, double h_before, double h, double dt) {
  if (p.bounds.size() != 1) p.bounds = gpu::DeviceBuffer<PositionBounds>(1);
  reset_bounds_kernel<<<1, 1>>>(p.bounds.data());
  NF_CUDA_LAUNCHED();
  launch<true>(v.dim, v.n, {p.x.data(), v.x.data()}, {p.y.data(), v.y.data()}, {p.z.data(), v.z.data()}, a, h_before,
               h, dt, p.bounds.data());
  p.bounds_valid = v.n == p.n;  // the drift moved every particle, and reduced their bounds
}

}  // namespace nf::sim_gpu
