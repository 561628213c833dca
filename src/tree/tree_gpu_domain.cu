// GPU tree builder, stage "domain": the default domain (origin = componentwise minimum, side =
// largest extent, or 1) reduced on the device, exactly as default_domain() on the CPU.
#include <algorithm>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "tree/tree_gpu_stages.h"

namespace nf::tree_gpu {
namespace {

//! Launch shape of the reduction: a grid-stride loop over at most `max_blocks` blocks.
struct DomainPolicy {
  static constexpr unsigned threads = 256;
  static constexpr unsigned max_blocks = 1024;  // enough to saturate the memory system
};

// Order-preserving map of doubles to unsigned integers, so atomicMin/atomicMax on 64-bit
// integers reduce doubles exactly.
__device__ unsigned long long ordered_bits(double v) {
  const unsigned long long b = static_cast<unsigned long long>(__double_as_longlong(v));
  return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}
__device__ double from_ordered_bits(unsigned long long b) {
  b = (b & 0x8000000000000000ull) ? (b & ~0x8000000000000000ull) : ~b;
  return __longlong_as_double(static_cast<long long>(b));
}

__device__ void reset_bounds(DomainBounds* b) {
  for (int a = 0; a < 3; ++a) {
    b->lo[a] = ~0ull;
    b->hi[a] = 0ull;
  }
}

__global__ void bounds_init_kernel(DomainBounds* b) { reset_bounds(b); }

template <int D>
__global__ void bounds_kernel(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                              std::size_t n, DomainBounds* b) {
  unsigned long long lo[D], hi[D];
  for (int a = 0; a < D; ++a) lo[a] = ~0ull, hi[a] = 0ull;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const double v[3] = {x[i], y[i], D == 3 ? z[i] : 0.0};
    for (int a = 0; a < D; ++a) {
      const unsigned long long o = ordered_bits(v[a]);
      lo[a] = min(lo[a], o);
      hi[a] = max(hi[a], o);
    }
  }
  for (int a = 0; a < D; ++a) {
    for (int off = 16; off > 0; off >>= 1) {
      lo[a] = min(lo[a], __shfl_xor_sync(0xffffffffu, lo[a], off));
      hi[a] = max(hi[a], __shfl_xor_sync(0xffffffffu, hi[a], off));
    }
    if ((threadIdx.x & 31) == 0) {
      atomicMin(&b->lo[a], lo[a]);
      atomicMax(&b->hi[a], hi[a]);
    }
  }
}

template <int D>
__global__ void domain_finalize_kernel(DomainBounds* b, std::size_t n, Domain* out) {
  Domain d;
  double extent = 0.0;
  for (int a = 0; a < 3; ++a) d.origin[a] = 0.0;
  if (n > 0)
    for (int a = 0; a < D; ++a) {
      const double lo = from_ordered_bits(b->lo[a]), hi = from_ordered_bits(b->hi[a]);
      d.origin[a] = lo;
      extent = fmax(extent, hi - lo);
    }
  d.side = extent > 0.0 ? extent : 1.0;
  *out = d;
  reset_bounds(b);  // ready for the next build: saves a launch
}

}  // namespace

void init_domain_bounds(Scratch& s) {
  bounds_init_kernel<<<1, 1>>>(s.bounds.data());
  NF_CUDA_LAUNCHED();
}

void reduce_domain(const DeviceParticles& p, Scratch& s) {
  const unsigned grid = std::min(gpu::blocks_for(p.n, DomainPolicy::threads), DomainPolicy::max_blocks);
  gpu::dispatch_dim(p.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    bounds_kernel<D><<<grid, DomainPolicy::threads>>>(p.x.data(), p.y.data(), D == 3 ? p.z.data() : nullptr, p.n,
                                                      s.bounds.data());
    NF_CUDA_LAUNCHED();
    domain_finalize_kernel<D><<<1, 1>>>(s.bounds.data(), p.n, s.domain.data());
    NF_CUDA_LAUNCHED();
  });
}

}  // namespace nf::tree_gpu
