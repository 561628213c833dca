// The GPU tree builder. Stages, each a kernel or a CUB call on the default stream:
//   domain      min/max of the positions (only without an explicit domain)
//   keys        Morton key of each particle's box, and the identity permutation
//   sort        cub::DeviceRadixSort::SortPairs over the key's dim*K bits (stable: ties keep
//               input order, exactly as the CPU counting sort)
//   box starts  boxIdx from the boundaries between runs of equal keys; non-empty box list
//   neighbors   per-box neighbor counts, exclusive scans, then the lists
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <utility>

#include "common/box_rule.h"
#include "common/cuda_check.cuh"
#include "common/errors.h"
#include "quadtree/morton.h"
#include "quadtree/neighbors.h"
#include "quadtree/tree_gpu.h"

namespace nf {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>(std::max<std::size_t>(1, (n + kThreads - 1) / kThreads)); }

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

struct DomainBounds {
  unsigned long long lo[3], hi[3];
};

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

// Same rule as default_domain() on the CPU: origin = minimum, side = largest extent, or 1.
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

template <int D>
__global__ void keys_kernel(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                            std::uint32_t n, int level, const Domain* __restrict__ domain,
                            std::uint32_t* __restrict__ keys, std::uint32_t* __restrict__ index) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Domain dom = *domain;
  std::uint32_t c[D];
  c[0] = box_coordinate(x[i], dom.origin[0], dom.side, level);
  c[1] = box_coordinate(y[i], dom.origin[1], dom.side, level);
  if constexpr (D == 3) c[2] = box_coordinate(z[i], dom.origin[2], dom.side, level);
  keys[i] = morton_encode<D>(c);
  index[i] = i;
}

// Thread i (0 <= i <= n) fills box_start[b] = i for every box b in (key[i-1], key[i]], with
// key[-1] = -1 and key[n] = nbox: each box start is written exactly once, empty boxes included.
__global__ void box_starts_kernel(const std::uint32_t* __restrict__ sorted_keys, std::uint32_t n, std::uint32_t nbox,
                                  std::uint32_t* __restrict__ box_start) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > n) return;
  const std::uint32_t first = i == 0 ? 0 : sorted_keys[i - 1] + 1;
  const std::uint32_t last = i == n ? nbox : sorted_keys[i];
  for (std::uint32_t b = first; b <= last; ++b) box_start[b] = i;
}

__global__ void max_count_kernel(const std::uint32_t* __restrict__ box_start, std::uint32_t nbox,
                                 std::uint32_t* __restrict__ max_count) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t c = b < nbox ? box_start[b + 1] - box_start[b] : 0;
  for (int off = 16; off > 0; off >>= 1) c = max(c, __shfl_xor_sync(0xffffffffu, c, off));
  if ((threadIdx.x & 31) == 0 && c > 0) atomicMax(max_count, c);
}

struct NonEmpty {
  const std::uint32_t* box_start;
  __device__ bool operator()(std::uint32_t b) const { return box_start[b + 1] > box_start[b]; }
};

template <int D>
__global__ void neighbor_count_kernel(std::uint32_t nbox, int level, std::uint32_t* __restrict__ full_count,
                                      std::uint32_t* __restrict__ half_count) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > nbox) return;
  if (b == nbox) {  // the scans run over nbox + 1 entries so that offset[nbox] is the total
    full_count[b] = half_count[b] = 0;
    return;
  }
  std::uint32_t nb[26];
  const int n = box_neighbors<D>(b, level, false, nb);
  int larger = 0;
  for (int k = 0; k < n; ++k) larger += nb[k] > b;
  full_count[b] = n;
  half_count[b] = larger;
}

template <int D>
__global__ void neighbor_fill_kernel(std::uint32_t nbox, int level, const std::uint32_t* __restrict__ full_offset,
                                     const std::uint32_t* __restrict__ half_offset, std::uint32_t* __restrict__ full_ids,
                                     std::uint32_t* __restrict__ half_ids) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= nbox) return;
  std::uint32_t nb[26];
  const int n = box_neighbors<D>(b, level, false, nb);
  std::uint32_t f = full_offset[b], h = half_offset[b];
  for (int k = 0; k < n; ++k) {
    full_ids[f++] = nb[k];
    if (nb[k] > b) half_ids[h++] = nb[k];
  }
}

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

struct GpuTreeBuilder::Scratch {
  gpu::DeviceBuffer<std::uint32_t> keys, index;  // the sort's other half of (particle_box, order)
  gpu::DeviceBuffer<std::uint32_t> full_count, half_count, counters;  // counters: max count, nonempty count
  gpu::DeviceBuffer<DomainBounds> bounds;
  gpu::DeviceBuffer<Domain> domain;
  gpu::DeviceBuffer<unsigned char> temp;
  std::size_t temp_bytes = 0;
  gpu::EventTimer stage[5];
};

GpuTreeBuilder::GpuTreeBuilder(int dim, int level, std::size_t n) : s_(new Scratch) {
  gpu::require("the GPU tree builder");
  check_level(dim, level, n, gpu::device_info().free_bytes, "free GPU memory");
  if (n > 0x7FFFFFFFull) throw UsageError("the GPU builder takes at most 2^31 - 1 particles");
  DeviceTree& t = tree_;
  t.dim = dim;
  t.level = level;
  t.nbox = 1u << (dim * level);
  t.n = static_cast<std::uint32_t>(n);
  t.box_start = gpu::DeviceBuffer<std::uint32_t>(t.nbox + 1);
  t.order = gpu::DeviceBuffer<std::uint32_t>(n);
  t.particle_box = gpu::DeviceBuffer<std::uint32_t>(n);
  t.nonempty = gpu::DeviceBuffer<std::uint32_t>(t.nbox);
  const std::uint64_t links = full_link_count(dim, level);
  t.full_offset = gpu::DeviceBuffer<std::uint32_t>(t.nbox + 1);
  t.half_offset = gpu::DeviceBuffer<std::uint32_t>(t.nbox + 1);
  t.full_ids = gpu::DeviceBuffer<std::uint32_t>(links);
  t.half_ids = gpu::DeviceBuffer<std::uint32_t>(links / 2);

  Scratch& s = *s_;
  s.keys = gpu::DeviceBuffer<std::uint32_t>(n);
  s.index = gpu::DeviceBuffer<std::uint32_t>(n);
  s.full_count = gpu::DeviceBuffer<std::uint32_t>(t.nbox + 1);
  s.half_count = gpu::DeviceBuffer<std::uint32_t>(t.nbox + 1);
  s.counters = gpu::DeviceBuffer<std::uint32_t>(2);
  s.bounds = gpu::DeviceBuffer<DomainBounds>(1);
  s.domain = gpu::DeviceBuffer<Domain>(1);
  bounds_init_kernel<<<1, 1>>>(s.bounds.data());  // each domain reduction resets it for the next
  NF_CUDA_LAUNCHED();

  // One temporary allocation large enough for every CUB call of the build.
  std::size_t bytes = 0, need = 0;
  const int num = static_cast<int>(n);
  cub::DoubleBuffer<std::uint32_t> k(nullptr, nullptr), v(nullptr, nullptr);
  NF_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, need, k, v, num, 0, std::max(1, dim * level)));
  bytes = std::max(bytes, need);
  NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, need, static_cast<std::uint32_t*>(nullptr),
                                        static_cast<std::uint32_t*>(nullptr), static_cast<int>(t.nbox + 1)));
  bytes = std::max(bytes, need);
  NF_CUDA(cub::DeviceSelect::If(nullptr, need, thrust::counting_iterator<std::uint32_t>(0),
                                static_cast<std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
                                static_cast<int>(t.nbox), NonEmpty{nullptr}));
  bytes = std::max(bytes, need);
  s.temp_bytes = std::max<std::size_t>(bytes, 1);
  s.temp = gpu::DeviceBuffer<unsigned char>(s.temp_bytes);
}

GpuTreeBuilder::~GpuTreeBuilder() = default;

void GpuTreeBuilder::build(const DeviceParticles& p, const Domain* domain, GpuBuildTimes* times) {
  DeviceTree& t = tree_;
  Scratch& s = *s_;
  if (p.dim != t.dim || p.n != t.n) throw std::logic_error("GpuTreeBuilder::build: particles do not match the builder");
  const std::uint32_t n = t.n;
  const double* z = t.dim == 3 ? p.z.data() : nullptr;
  auto mark = [&](int k) {
    if (times) s.stage[k].start();
  };
  auto end = [&](int k) {
    if (times) s.stage[k].stop();
  };

  mark(0);
  if (domain) {
    gpu::copy_to_device(s.domain.data(), domain, sizeof(Domain));
  } else {
    const unsigned grid = std::min<unsigned>(blocks_for(n), 1024);
    if (t.dim == 2)
      bounds_kernel<2><<<grid, kThreads>>>(p.x.data(), p.y.data(), z, n, s.bounds.data());
    else
      bounds_kernel<3><<<grid, kThreads>>>(p.x.data(), p.y.data(), z, n, s.bounds.data());
    if (t.dim == 2)
      domain_finalize_kernel<2><<<1, 1>>>(s.bounds.data(), n, s.domain.data());
    else
      domain_finalize_kernel<3><<<1, 1>>>(s.bounds.data(), n, s.domain.data());
    NF_CUDA_LAUNCHED();
  }
  end(0);

  mark(1);
  if (n > 0) {
    if (t.dim == 2)
      keys_kernel<2><<<blocks_for(n), kThreads>>>(p.x.data(), p.y.data(), z, n, t.level, s.domain.data(),
                                                  s.keys.data(), s.index.data());
    else
      keys_kernel<3><<<blocks_for(n), kThreads>>>(p.x.data(), p.y.data(), z, n, t.level, s.domain.data(),
                                                  s.keys.data(), s.index.data());
    NF_CUDA_LAUNCHED();
  }
  end(1);

  // Sort into (particle_box, order); level 0 has one box and nothing to sort.
  mark(2);
  if (n > 0) {
    if (t.level == 0) {
      std::swap(t.particle_box, s.keys);  // one box: the keys and identity are already sorted
      std::swap(t.order, s.index);
    } else {
      cub::DoubleBuffer<std::uint32_t> keys(s.keys.data(), t.particle_box.data());
      cub::DoubleBuffer<std::uint32_t> vals(s.index.data(), t.order.data());
      std::size_t bytes = s.temp_bytes;
      NF_CUDA(cub::DeviceRadixSort::SortPairs(s.temp.data(), bytes, keys, vals, static_cast<int>(n), 0,
                                              t.dim * t.level));
      // CUB leaves the result in whichever buffer its pass count ends on; the buffers trade
      // places instead of copying (the next build overwrites the scratch side anyway).
      if (keys.Current() != t.particle_box.data()) std::swap(t.particle_box, s.keys);
      if (vals.Current() != t.order.data()) std::swap(t.order, s.index);
    }
  }
  end(2);

  mark(3);
  if (n == 0) {
    t.box_start.fill(0);
  } else {
    box_starts_kernel<<<blocks_for(n + 1), kThreads>>>(t.particle_box.data(), n, t.nbox, t.box_start.data());
    NF_CUDA_LAUNCHED();
  }
  s.counters.fill(0);
  max_count_kernel<<<blocks_for(t.nbox), kThreads>>>(t.box_start.data(), t.nbox, s.counters.data());
  NF_CUDA_LAUNCHED();
  {
    std::size_t bytes = s.temp_bytes;
    NF_CUDA(cub::DeviceSelect::If(s.temp.data(), bytes, thrust::counting_iterator<std::uint32_t>(0), t.nonempty.data(),
                                  s.counters.data() + 1, static_cast<int>(t.nbox), NonEmpty{t.box_start.data()}));
  }
  end(3);

  mark(4);
  if (t.dim == 2)
    neighbor_count_kernel<2><<<blocks_for(t.nbox + 1), kThreads>>>(t.nbox, t.level, s.full_count.data(), s.half_count.data());
  else
    neighbor_count_kernel<3><<<blocks_for(t.nbox + 1), kThreads>>>(t.nbox, t.level, s.full_count.data(), s.half_count.data());
  NF_CUDA_LAUNCHED();
  {
    std::size_t bytes = s.temp_bytes;
    NF_CUDA(cub::DeviceScan::ExclusiveSum(s.temp.data(), bytes, s.full_count.data(), t.full_offset.data(),
                                          static_cast<int>(t.nbox + 1)));
    bytes = s.temp_bytes;
    NF_CUDA(cub::DeviceScan::ExclusiveSum(s.temp.data(), bytes, s.half_count.data(), t.half_offset.data(),
                                          static_cast<int>(t.nbox + 1)));
  }
  if (t.dim == 2)
    neighbor_fill_kernel<2><<<blocks_for(t.nbox), kThreads>>>(t.nbox, t.level, t.full_offset.data(), t.half_offset.data(),
                                                              t.full_ids.data(), t.half_ids.data());
  else
    neighbor_fill_kernel<3><<<blocks_for(t.nbox), kThreads>>>(t.nbox, t.level, t.full_offset.data(), t.half_offset.data(),
                                                              t.full_ids.data(), t.half_ids.data());
  NF_CUDA_LAUNCHED();
  end(4);

  // Launch parameters and the domain come back to the host (one small synchronous copy).
  std::uint32_t counters[2];
  gpu::copy_to_host(counters, s.counters.data(), sizeof counters);
  gpu::copy_to_host(&t.domain, s.domain.data(), sizeof(Domain));
  t.max_box_count = counters[0];
  t.nonempty_count = counters[1];

  if (times) {
    times->domain = s.stage[0].elapsed_ms();
    times->keys = s.stage[1].elapsed_ms();
    times->sort = s.stage[2].elapsed_ms();
    times->box_starts = s.stage[3].elapsed_ms();
    times->neighbors = s.stage[4].elapsed_ms();
    times->total = times->domain + times->keys + times->sort + times->box_starts + times->neighbors;
  }
}

std::vector<double> GpuTreeBuilder::time_bare_sort(int warmup, int reps) {
  DeviceTree& t = tree_;
  Scratch& s = *s_;
  std::vector<double> ms;
  if (t.n == 0 || t.level == 0) return std::vector<double>(static_cast<std::size_t>(reps), 0.0);
  // The sorted keys of the last build, reshuffled into input order, are exactly the keys the
  // build sorted; sorting clobbers its inputs, so each run starts from a fresh copy.
  gpu::DeviceBuffer<std::uint32_t> keys_in(t.n), vals_in(t.n), keys_out(t.n), vals_out(t.n);
  gpu::DeviceBuffer<std::uint32_t> keys_orig(t.n), vals_orig(t.n);
  {
    // keys_orig[order[s]] = particle_box[s]
    std::vector<std::uint32_t> order = t.order.download(), sorted = t.particle_box.download(), k(t.n), v(t.n);
    for (std::uint32_t i = 0; i < t.n; ++i) k[order[i]] = sorted[i], v[i] = i;
    keys_orig.upload(k);
    vals_orig.upload(v);
  }
  gpu::EventTimer timer;
  for (int r = 0; r < warmup + reps; ++r) {
    gpu::copy_on_device(keys_in.data(), keys_orig.data(), t.n * sizeof(std::uint32_t));
    gpu::copy_on_device(vals_in.data(), vals_orig.data(), t.n * sizeof(std::uint32_t));
    cub::DoubleBuffer<std::uint32_t> keys(keys_in.data(), keys_out.data()), vals(vals_in.data(), vals_out.data());
    std::size_t bytes = s.temp_bytes;
    timer.start();
    NF_CUDA(cub::DeviceRadixSort::SortPairs(s.temp.data(), bytes, keys, vals, static_cast<int>(t.n), 0, t.dim * t.level));
    timer.stop();
    const double e = timer.elapsed_ms();
    if (r >= warmup) ms.push_back(e);
  }
  return ms;
}

DeviceParticles upload_particles(const Particles& p) {
  gpu::require("uploading particles");
  DeviceParticles d;
  d.dim = p.dim;
  d.n = p.size();
  d.x = gpu::DeviceBuffer<double>(p.x);
  d.y = gpu::DeviceBuffer<double>(p.y);
  if (p.dim == 3) d.z = gpu::DeviceBuffer<double>(p.z);
  d.m = gpu::DeviceBuffer<double>(p.m);
  return d;
}

Tree download_tree(const DeviceTree& t) {
  Tree h;
  h.dim = t.dim;
  h.level = t.level;
  h.domain = t.domain;
  h.nbox = t.nbox;
  h.box_start = t.box_start.download();
  h.order = t.order.download();
  h.particle_box = t.particle_box.download();
  h.nonempty = t.nonempty.download();
  h.nonempty.resize(t.nonempty_count);
  h.full.offset = t.full_offset.download();
  h.full.ids = t.full_ids.download();
  h.half.offset = t.half_offset.download();
  h.half.ids = t.half_ids.download();
  return h;
}

template <class T>
void gather_bodies(const DeviceParticles& p, const DeviceTree& t, gpu::DeviceBuffer<Body<T>>& bodies) {
  if (bodies.size() != t.n) bodies = gpu::DeviceBuffer<Body<T>>(t.n);
  if (t.n == 0) return;
  if (t.dim == 2)
    gather_kernel<2, T><<<blocks_for(t.n), kThreads>>>(p.x.data(), p.y.data(), nullptr, p.m.data(), t.order.data(), t.n,
                                                       bodies.data());
  else
    gather_kernel<3, T><<<blocks_for(t.n), kThreads>>>(p.x.data(), p.y.data(), p.z.data(), p.m.data(), t.order.data(),
                                                       t.n, bodies.data());
  NF_CUDA_LAUNCHED();
}

template void gather_bodies<float>(const DeviceParticles&, const DeviceTree&, gpu::DeviceBuffer<Body<float>>&);
template void gather_bodies<double>(const DeviceParticles&, const DeviceTree&, gpu::DeviceBuffer<Body<double>>&);

}  // namespace nf
