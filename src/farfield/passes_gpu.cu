// The far field's passes on the GPU (farfield/passes_gpu.h): kernels and their drivers.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/cuda_check.cuh"
#include "core/errors.h"
#include "core/launch.cuh"
#include "farfield/expansion.h"
#include "farfield/l2p_fixed.cuh"
#include "farfield/passes_gpu.h"
#include "tree/adaptive.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {


// Centre of leaf box `key` (double, as the CPU method computes it).
template <int D>
__device__ void leaf_centre(std::uint64_t key, const LeafGeometry& g, double (&c)[D]) {
  std::uint32_t ic[D];
  morton_coords<D>(key, ic);
  for (int a = 0; a < D; ++a) c[a] = g.origin[a] + (ic[a] + 0.5) * g.side;
}


// P2M's work units: four consecutive x exponents a0 = 4k .. 4k + 3 of one column, the terms with
// y exponent j and z exponent l (2D: l = 0), tail degree s = j + l. Units run chunk by chunk (k),
// each chunk over the columns with s <= p - 4k in tail degree order, so that a unit's index
// decodes in a few operations.
template <int D>
__host__ __device__ inline int p2m_columns(int top) {  // columns with tail degree <= top
  return top < 0 ? 0 : D == 3 ? (top + 1) * (top + 2) / 2 : top + 1;
}

struct P2MUnit {
  int j, l, a0;
};

template <int D>
__device__ inline P2MUnit p2m_unit(int p, int u) {
  int k = 0;
  for (int n = p2m_columns<D>(p); u >= n; n = p2m_columns<D>(p - 4 * k)) u -= n, ++k;
  if constexpr (D == 2) return {u, 0, 4 * k};
  int s = int((sqrtf(8.0f * float(u) + 1.0f) - 1.0f) * 0.5f);  // s(s+1)/2 <= u < (s+1)(s+2)/2
  while (s * (s + 1) / 2 > u) --s;
  while ((s + 1) * (s + 2) / 2 <= u) ++s;
  const int l = u - s * (s + 1) / 2;
  return {s - l, l, 4 * k};
}

// A P2M block's layout: per particle its factors [x: m y_x^a / a!, zeros to a multiple of 4 | y | z],
// `groups` groups of threads that each take every groups-th particle, a partial sum per group and term.
struct P2MShape {
  int row_x, stride, units, groups;
};

template <int D, class T>
P2MShape p2m_shape(int p, int threads) {
  P2MShape s;
  s.row_x = (p + 4) & ~3;
  s.stride = (s.row_x + (D - 1) * (p + 1) + 3) & ~3;
  if (s.stride % 32 == 0) s.stride += 4;  // neighbouring particles' rows in other banks
  s.units = 0;
  for (int k = 0; 4 * k <= p; ++k) s.units += p2m_columns<D>(p - 4 * k);
  s.groups = s.units >= threads ? 1 : std::min(threads / s.units, 8);
  return s;
}

template <int D, class T>
std::size_t p2m_shared_bytes(const P2MShape& s, int p, int threads) {
  return (std::size_t(threads) * s.stride + std::size_t(s.groups) * terms<D>(p)) * sizeof(T);
}

// 1 / j for the powers' recurrences (j = 1 .. kMaxOrder; a warp reads one entry at a time).
__constant__ double kInverse[kMaxOrder + 1] = {0,       1,        1. / 2,  1. / 3,  1. / 4,  1. / 5,  1. / 6,
                                              1. / 7,  1. / 8,   1. / 9,  1. / 10, 1. / 11, 1. / 12, 1. / 13,
                                              1. / 14, 1. / 15,  1. / 16, 1. / 17, 1. / 18, 1. / 19, 1. / 20};

template <class T>
__device__ __forceinline__ void load4(const T* p, T (&v)[4]) {
  if constexpr (std::is_same_v<T, float>) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
    const double2 q0 = *reinterpret_cast<const double2*>(p), q1 = *reinterpret_cast<const double2*>(p + 2);
    v[0] = q0.x, v[1] = q0.y, v[2] = q1.x, v[3] = q1.y;
  }
}

// One block of Threads for leaf box b (a block per box, or the larger boxes from p2m_kernel's
// queue). Threads particles at a time put their factors in shared memory
// (r in box units, the mass folded into the x factors); then each thread sums its unit's four
// terms M_(a,j,l) += (m x^a / a!) (y^j / j! z^l / l!) over its group's particles in order: one
// product of the y and z factors and one 4-wide load of x factors for four independent
// multiply-adds. The groups' partial sums stay in shared memory across chunks and are added in
// group order at the end. The shared loads bound it (ncu: 86% of the memory throughput at 128
// threads); a thread per term (three loads and a dependent multiply-add a product) took 1.89 ms at
// p = 8 on 3D uniform 2^24, level 6 (H100), this kernel about 1.1 ms (docs/design.md §16).
template <int D, class T, int Threads>
__device__ __forceinline__ void p2m_box(const Body<T>* __restrict__ sorted, const DeviceLevel& leaf,
                                        const LeafGeometry& g, int p, int terms, const P2MShape& shape,
                                        T* __restrict__ M, std::uint32_t b) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* pw = reinterpret_cast<T*>(smem);     // [Threads][stride]
  T* part = pw + Threads * shape.stride;  // [groups][terms]
  if (leaf.flags && (leaf.flags[b] & adaptive::kExpanded)) return;  // an adaptive tree's box: M2M gives its moments
  for (int i = threadIdx.x; i < shape.groups * terms; i += Threads) part[i] = T(0);
  __syncthreads();
  double c[D];
  leaf_centre<D>(leaf.key[b], g, c);
  const std::uint32_t first = leaf.first[b], last = leaf.last ? leaf.last[b] : leaf.first[b + 1];
  const int work = shape.groups * shape.units, row_y = shape.row_x, row_z = shape.row_x + p + 1;
  for (std::uint32_t base = first; base < last; base += Threads) {
    const int count = int(min(std::uint32_t(Threads), last - base));
    if (threadIdx.x < count) {
      const Body<T> body = sorted[base + threadIdx.x];
      const double x[3] = {double(body.x), double(body.y), double(body.z)};
      T* w = pw + threadIdx.x * shape.stride;
      for (int a = 0; a < D; ++a) {
        const T r = T((x[a] - c[a]) / g.side);
        T* out = w + (a == 0 ? 0 : a == 1 ? row_y : row_z);
        T f = T(1);  // r^j / j!
        out[0] = a == 0 ? body.m : T(1);
        for (int j = 1; j <= p; ++j) {
          f = f * r * T(kInverse[j]);
          out[j] = a == 0 ? body.m * f : f;
        }
        if (a == 0)
          for (int j = p + 1; j < shape.row_x; ++j) out[j] = T(0);
      }
    }
    __syncthreads();
    for (int wi = threadIdx.x; wi < work; wi += Threads) {
      const int group = wi / shape.units;
      const auto [j, l, a0] = p2m_unit<D>(p, wi - group * shape.units);
      T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
      const T* w = pw + group * shape.stride;
#pragma unroll 4
      for (int i = group; i < count; i += shape.groups, w += shape.groups * shape.stride) {
        T xv[4];
        load4(w + a0, xv);
        const T yz = D == 3 ? w[row_y + j] * w[row_z + l] : w[row_y + j];
        s0 += xv[0] * yz;
        s1 += xv[1] * yz;
        s2 += xv[2] * yz;
        s3 += xv[3] * yz;
      }
      T* out = part + group * terms;
      const int s = j + l, top = p - s;  // x exponents a0 .. min(a0 + 3, top)
      out[row_start<D>(s + a0, s) + l] += s0;
      if (a0 + 1 <= top) out[row_start<D>(s + a0 + 1, s) + l] += s1;
      if (a0 + 2 <= top) out[row_start<D>(s + a0 + 2, s) + l] += s2;
      if (a0 + 3 <= top) out[row_start<D>(s + a0 + 3, s) + l] += s3;
    }
    __syncthreads();
  }
  for (int n = threadIdx.x; n < terms; n += Threads) {
    T sum = part[n];
    for (int group = 1; group < shape.groups; ++group) sum += part[group * terms + n];
    M[std::size_t(b) * terms + n] += sum;
  }
}

// P2M of small boxes, a thread per box (docs/design.md §16, "P2M of small boxes"): a block per box
// spends its set-up, its barriers and most of its threads on a box of a few particles (3D uniform
// 2^22 at level 8, about one a box: 5.9 ms, H200). Here a thread keeps its box's moments in
// registers, the order P a template argument so that every index is a constant, and sums each
// particle's terms by columns (j, l) as l2p_fixed reads them: M_(a,j,l) += (x^a / a!) (m y^j / j!
// z^l / l!). A box of more than `limit` particles (kSmallBox by default) is appended to work[2 ..]
// (its count in work[0]) for p2m_kernel.
//
// kSmallBox: measured on the H200 (3D float, upward pass ms, at limits 32 / 96 / 256 / 1024 and a
// block per box; results/fmm-p2m-small): uniform 2^24 level 6 (64 a box) p = 4 0.76 with a block
// per box, 0.44-0.45 at 96 and above; p = 6 1.23 -> 0.79. Plummer 2^24 level 7 p = 4 1.83 (block)
// -> 1.34 at 96, 1.41 at 256, 1.84 at 1024 (its largest boxes alone on a thread); p = 6 2.59 ->
// 2.45 / 2.50 / 2.82. Plummer 2^22 level 8 p = 4: 1.21 at 32, 1.30 at 256.
constexpr std::uint32_t kSmallBox = 96;

// The orders it runs at: up to kThreadBoxMaxOrder (passes_gpu.h). Measured on 3D float only (H200,
// 2^22, upward pass ms, block per box -> this): p = 4 Plummer level 8 1.84 -> 1.20, clusters level
// 9 2.79 -> 1.80, uniform level 8 9.5 -> 5.8 and level 6 (16 a box) 0.54 -> 0.30; p = 6 Plummer
// level 8 2.28 -> 2.07 (results/fmm-p2m-small); a trial at p = 8 (165 moments, 254 registers) was
// slower: Plummer level 8 3.78 -> 4.22, fmm-adaptive's Plummer 0.67 -> 0.99; so was one that split
// the moments of p = 8 and 10 over 2 and 4 warps (each summing its own columns): uniform 2^24 level
// 6 p = 8 1.38 -> 1.53 ms, p = 10 2.52 -> 3.02, Plummer 2^24 level 7 p = 8 3.24 -> 3.83.
template <int D, class T, int P>
__global__ void __launch_bounds__(128) p2m_small_kernel(const Body<T>* __restrict__ sorted, DeviceLevel leaf,
                                                        LeafGeometry g, T* __restrict__ M,
                                                        std::uint32_t* __restrict__ work, std::uint32_t limit) {
  constexpr int N = terms<D>(P);
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= leaf.boxes || (leaf.flags && (leaf.flags[b] & adaptive::kExpanded))) return;
  const std::uint32_t first = leaf.first[b], last = leaf.last ? leaf.last[b] : leaf.first[b + 1];
  if (last - first > limit) {
    work[2 + atomicAdd(work, 1u)] = b;
    return;
  }
  double c[D];
  leaf_centre<D>(leaf.key[b], g, c);
  T acc[N];
#pragma unroll
  for (int n = 0; n < N; ++n) acc[n] = T(0);
  for (std::uint32_t i = first; i < last; ++i) {
    const Body<T> body = sorted[i];
    const double x[3] = {double(body.x), double(body.y), double(body.z)};
    T f[D][P + 1];  // r_a^j / j!
#pragma unroll
    for (int a = 0; a < D; ++a) {
      const T r = T((x[a] - c[a]) / g.side);
      f[a][0] = T(1);
#pragma unroll
      for (int j = 1; j <= P; ++j) f[a][j] = f[a][j - 1] * r * T(1.0 / j);
    }
#pragma unroll
    for (int s = 0; s <= P; ++s)
#pragma unroll
      for (int l = 0; l <= (D == 3 ? s : 0); ++l) {
        const T yz = body.m * (D == 3 ? f[1][s - l] * f[D - 1][l] : f[1][s]);
#pragma unroll
        for (int a = 0; a <= P - s; ++a) acc[row_start<D>(a + s, s) + l] += f[0][a] * yz;
      }
  }
  T* out = M + std::size_t(b) * N;
#pragma unroll
  for (int n = 0; n < N; ++n) out[n] += acc[n];
}

// `work` (null: the box blockIdx.x): the boxes p2m_small_kernel left, work[2 ..] (work[0] of them),
// taken one at a time from the counter work[1] by the resident blocks.
template <int D, class T, int Threads>
__global__ void __launch_bounds__(Threads) p2m_kernel(const Body<T>* __restrict__ sorted, DeviceLevel leaf,
                                                          LeafGeometry g, int p, int terms, P2MShape shape,
                                                          T* __restrict__ M, std::uint32_t* __restrict__ work) {
  __shared__ std::uint32_t item;
  for (bool more = true; more;) {
    std::uint32_t b = blockIdx.x;
    more = false;
    if (work) {
      __syncthreads();  // the block is done with the previous box's shared sums and item
      if (threadIdx.x == 0) item = atomicAdd(work + 1, 1u);
      __syncthreads();
      if (item >= work[0]) return;
      b = work[2 + item], more = true;
    }
    p2m_box<D, T, Threads>(sorted, leaf, g, p, terms, shape, M, b);
  }
}


// One thread per particle, the order P a template argument (farfield/l2p_fixed.cuh).
template <int D, class T, int P>
__global__ void l2p_kernel(const Body<T>* __restrict__ sorted, const std::uint32_t* __restrict__ particle_box,
                           std::uint32_t n, DeviceLevel leaf, LeafGeometry g, int p, int terms, const T* __restrict__ L,
                           Acc4<T>* __restrict__ acc) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t b = particle_box[i];
  double c[D];
  leaf_centre<D>(leaf.key[b], g, c);
  const Body<T> body = sorted[i];
  const double x[3] = {double(body.x), double(body.y), double(body.z)};
  T y[D];
  for (int a = 0; a < D; ++a) y[a] = T((x[a] - c[a]) / g.side);
  T a[D] = {};
  l2p_fixed<D, T, P>(L + std::size_t(b) * terms, y, a);
  const T scale = T(1.0 / (g.side * g.side));
  Acc4<T> add{a[0] * scale, a[1] * scale, T(0), T(0)};
  if constexpr (D == 3) add.z = a[2] * scale;
  add_into(&acc[i], add);
}

}  // namespace


void check_pass_variables() {
  const auto value = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  const std::string shifts = value("NEARFIELD_SHIFTS"), small = value("NEARFIELD_P2M_SMALL"),
                    max = value("NEARFIELD_P2M_SMALL_MAX");
  if (!shifts.empty() && shifts != "block" && shifts != "thread")
    throw UsageError("NEARFIELD_SHIFTS=" + shifts + ": expected block or thread");
  if (!small.empty() && small != "off" && small != "on")
    throw UsageError("NEARFIELD_P2M_SMALL=" + small + ": expected off or on");
  if (!max.empty() && (max.find_first_not_of("0123456789") != std::string::npos || max.size() > 9 ||
                       std::stoul(max) == 0))
    throw UsageError("NEARFIELD_P2M_SMALL_MAX=" + max + ": expected a positive count of particles");
}

template <int D, class T, int Threads>
void launch_p2m(const Body<T>* sorted, const DeviceLevel& leaf, const LeafGeometry& g, int p, T* M,
                std::uint64_t particles, gpu::Workspace* workspace) {
  const P2MShape shape = p2m_shape<D, T>(p, Threads);
  const std::size_t bytes = p2m_shared_bytes<D, T>(shape, p, Threads);
  const auto kernel = p2m_kernel<D, T, Threads>;
  gpu::require_shared_memory(bytes, gpu::static_shared_bytes(kernel),
                             "--order " + std::to_string(p) + " (" + std::to_string(D) + "D, " +
                                 (sizeof(T) == 4 ? "float" : "double") + "): P2M");
  if (bytes > 48 * 1024)  // 3D double from p = 10 on (97 KB at p = 20 with 128 threads)
    NF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  // NEARFIELD_P2M_SMALL=off: a block per box at every order; NEARFIELD_P2M_SMALL_MAX=n: the largest
  // box a thread takes (comparisons). Both are read at each call (the tests set them in turn).
  const bool small_off = [] {
    const char* v = std::getenv("NEARFIELD_P2M_SMALL");
    return v && std::string(v) == "off";
  }();
  const std::uint32_t limit = [] {
    const char* v = std::getenv("NEARFIELD_P2M_SMALL_MAX");
    return v && *v ? std::uint32_t(std::strtoul(v, nullptr, 10)) : kSmallBox;
  }();
  // Levels of more than `limit` particles a box on average (or of unknown count) keep a block per
  // box: with a limit of 32 the queue's larger boxes lost 4-6% to it (uniform 2^24 level 6, 64 a
  // box, p = 4, 6) and fmm-adaptive's leaves (about 200 a leaf) 21% (Plummer 2^22, p = 6; H200).
  if (p > kThreadBoxMaxOrder<D, T> || small_off || !workspace || particles == 0 ||
      particles > std::uint64_t(limit) * leaf.boxes) {
    kernel<<<leaf.boxes, Threads, bytes>>>(sorted, leaf, g, p, terms<D>(p), shape, M, nullptr);
    NF_CUDA(cudaGetLastError());
    return;
  }
  auto* work = static_cast<std::uint32_t*>(workspace->get((std::size_t(leaf.boxes) + 2) * sizeof(std::uint32_t)));
  NF_CUDA(cudaMemsetAsync(work, 0, 2 * sizeof(std::uint32_t)));
  dispatch_fixed_order(
      p,
      [&](auto order) {
        p2m_small_kernel<D, T, decltype(order)::value>
            <<<gpu::blocks_for(leaf.boxes, 128), 128>>>(sorted, leaf, g, M, work, limit);
      },
      std::make_integer_sequence<int, kThreadBoxMaxOrder<D, T>>{});
  NF_CUDA(cudaGetLastError());
  // The larger boxes: as many blocks as the GPU holds at once, each taking the next box.
  int resident = 0;
  NF_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Threads, bytes));
  const std::uint32_t blocks = std::min<std::uint32_t>(leaf.boxes, std::max(resident, 1) * gpu::sm_count());
  kernel<<<blocks, Threads, bytes>>>(sorted, leaf, g, p, terms<D>(p), shape, M, work);
  NF_CUDA(cudaGetLastError());
}

template <int D, class T>
void p2m(const Body<T>* sorted, const DeviceLevel& leaf, const LeafGeometry& g, int p, T* M,
         std::uint64_t particles, gpu::Workspace* workspace) {
  if (leaf.boxes == 0) return;
  // A block's threads: 64 (NEARFIELD_P2M_THREADS=128|256 for comparisons). On the H100 (3D float,
  // 2^24) 64 were fastest on uniform level 6 (P2M + M2M at p = 8: 1.36 ms against 1.59 and 2.50)
  // and on fmm-adaptive's Plummer (p = 10, S = 244: 3.06 ms against 3.24 and 4.53).
  static const int threads = [] {
    const char* v = std::getenv("NEARFIELD_P2M_THREADS");
    return v ? std::atoi(v) : 64;
  }();
  if (threads == 128)
    launch_p2m<D, T, 128>(sorted, leaf, g, p, M, particles, workspace);
  else if (threads == 256)
    launch_p2m<D, T, 256>(sorted, leaf, g, p, M, particles, workspace);
  else
    launch_p2m<D, T, 64>(sorted, leaf, g, p, M, particles, workspace);
}

template <int D, class T>
void l2p(const Body<T>* sorted, const std::uint32_t* particle_box, std::uint32_t n, const DeviceLevel& leaf,
         const LeafGeometry& g, int p, const T* L, Acc4<T>* acc) {
  if (n == 0) return;
  dispatch_fixed_order(p, [&](auto order) {
    l2p_kernel<D, T, decltype(order)::value>
        <<<gpu::blocks_for(n, 128), 128>>>(sorted, particle_box, n, leaf, g, p, terms<D>(p), L, acc);
  });
  NF_CUDA(cudaGetLastError());
}

#define NF_PASSES(D, T)                                                                                          \
  template void p2m<D, T>(const Body<T>*, const DeviceLevel&, const LeafGeometry&, int, T*, std::uint64_t,        \
                          gpu::Workspace*);                                                                    \
  template void l2p<D, T>(const Body<T>*, const std::uint32_t*, std::uint32_t, const DeviceLevel&, const LeafGeometry&, \
                          int, const T*, Acc4<T>*);
NF_PASSES(2, float)
NF_PASSES(2, double)
NF_PASSES(3, float)
NF_PASSES(3, double)
#undef NF_PASSES

}  // namespace nf::farfield
