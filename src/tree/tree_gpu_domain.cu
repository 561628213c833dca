// GPU tree builder, stage "domain": the default domain (origin = componentwise minimum, side =
// largest extent, or 1) reduced on the device, exactly as default_domain() on the CPU.
#include <algorithm>
#include <stdexcept>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "core/ordered_bits.cuh"
#include "tree/tree_gpu_stages.h"

namespace nf::tree_gpu {
namespace {

//! Launch shape of the reduction: a grid-stride loop over at most `max_blocks` blocks.
struct DomainPolicy {
  static constexpr unsigned threads = 256;
  static constexpr unsigned max_blocks = 1024;  // enough to saturate the memory system
};

using gpu::from_ordered_bits;
using gpu::reset_bounds;

__global__ void bounds_init_kernel(DomainBounds* b) { reset_bounds(b); }

template <int D>
__global__ void bounds_kernel(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                              std::size_t n, DomainBounds* b) {
  gpu::BoundsAccumulator<D> acc;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    acc.add(0, x[i]);
    acc.add(1, y[i]);
    if constexpr (D == 3) acc.add(2, z[i]);
  }
  acc.add_block_to(b);
}

// The domain of the bounds b; `reset` (b itself, or null) is left reset for the next reduction.
template <int D>
__global__ void domain_finalize_kernel(const DomainBounds* b, std::size_t n, Domain* out, DomainBounds* reset) {
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
  if (reset) reset_bounds(reset);  // ready for the next build: saves a launch
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
    domain_finalize_kernel<D><<<1, 1>>>(s.bounds.data(), p.n, s.domain.data(), s.bounds.data());
    NF_CUDA_LAUNCHED();
  });
}

void domain_from_bounds(const DeviceParticles& p, Scratch& s) {
  if (!p.bounds_valid || p.bounds.size() != 1) throw std::logic_error("domain_from_bounds: the particles carry no bounds");
  gpu::dispatch_dim(p.dim, [&](auto dim) {
    domain_finalize_kernel<decltype(dim)::value><<<1, 1>>>(p.bounds.data(), p.n, s.domain.data(), nullptr);
    NF_CUDA_LAUNCHED();
  });
}

}  // namespace nf::tree_gpu
