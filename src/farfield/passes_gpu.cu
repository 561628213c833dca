// The far field's passes on the GPU (farfield/passes_gpu.h): kernels and their drivers.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/cuda_check.cuh"
#include "core/env.h"
#include "core/errors.h"
#include "core/launch.cuh"
#include "farfield/expansion.h"
#include "farfield/l2p_fixed.cuh"
#include "farfield/p2m_tiles.cuh"
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
  // Each particle's load is issued one particle ahead of its sums: a thread's particles are a
  // chain of loads, and with a few warps a scheduler nothing else hid their latency.
  Body<T> next = first < last ? sorted[first] : Body<T>{};
  for (std::uint32_t i = first; i < last; ++i) {
    const Body<T> body = next;
    if (i + 1 < last) next = sorted[i + 1];
    const double x[3] = {double(body.x), double(body.y), double(body.z)};
    T f[D][P + 1];  // r_a^j / j!
#pragma unroll
    for (int a = 0; a < D; ++a) {
      const T r = T((x[a] - c[a]) * g.inv_side);
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
  for (int n = 0; n < N; ++n) out[n] = acc[n];
}

// `work` (null: the box blockIdx.x): the boxes p2m_small_kernel left, work[2 ..] (work[0] of them),
// taken one at a time from the counter work[1] by the resident blocks. A block sums a box's
// moments in tiles (farfield/p2m_tiles.cuh).
template <int D, class T, int P>
__global__ void __launch_bounds__(p2m_tiles::Shape<D, T, P>::kThreads)
    p2m_kernel(const Body<T>* __restrict__ sorted, DeviceLevel leaf, LeafGeometry g, T* __restrict__ M,
               std::uint32_t* __restrict__ work) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ std::uint32_t item;
  for (bool more = true; more;) {
    std::uint32_t b = blockIdx.x;
    more = false;
    if (work) {
      if (threadIdx.x == 0) item = atomicAdd(work + 1, 1u);
      __syncthreads();
      if (item >= work[0]) return;
      b = work[2 + item], more = true;
      __syncthreads();  // every thread has read item
    }
    if (leaf.flags && (leaf.flags[b] & adaptive::kExpanded)) continue;  // an adaptive tree's box: M2M gives its moments
    double c[D];
    leaf_centre<D>(leaf.key[b], g, c);
    const std::uint32_t first = leaf.first[b], last = leaf.last ? leaf.last[b] : leaf.first[b + 1];
    p2m_tiles::box<D, T, P>(sorted, first, last, c, g.inv_side, M + std::size_t(b) * terms<D>(P),
                            reinterpret_cast<T*>(smem));
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
  for (int a = 0; a < D; ++a) y[a] = T((x[a] - c[a]) * g.inv_side);
  T a[D] = {};
  l2p_fixed<D, T, P>(L + std::size_t(b) * terms, y, a);
  const T scale = T(g.inv_side * g.inv_side);
  Acc4<T> add{a[0] * scale, a[1] * scale, T(0), T(0)};
  if constexpr (D == 3) add.z = a[2] * scale;
  add_into(&acc[i], add);
}

}  // namespace


namespace {
// NEARFIELD_P2M_SMALL=off: a block per box at every order; NEARFIELD_P2M_SMALL_MAX=n: the largest box
// a thread takes (comparisons). Read at each call (the tests set them in turn).
bool p2m_small_off() { return env::choice("NEARFIELD_P2M_SMALL", {"off", "on"}) == "off"; }
std::uint32_t p2m_small_max() { return std::uint32_t(env::integer("NEARFIELD_P2M_SMALL_MAX", 1, 999999999, kSmallBox)); }
}  // namespace

std::string forced_shifts() { return env::choice("NEARFIELD_SHIFTS", {"thread", "line", "block"}); }

void check_pass_variables() {
  forced_shifts(), p2m_small_off(), p2m_small_max();
}

// A block per box of `leaf` (work null) or, with `work`, as many blocks as the GPU holds at once,
// each taking the next box of the list.
template <int D, class T, int P>
void launch_p2m_tiles(const Body<T>* sorted, const DeviceLevel& leaf, const LeafGeometry& g, T* M,
                      std::uint32_t* work) {
  using S = p2m_tiles::Shape<D, T, P>;
  constexpr std::size_t bytes = S::shared_bytes();
  const auto kernel = p2m_kernel<D, T, P>;
  gpu::require_shared_memory(bytes, gpu::static_shared_bytes(kernel),
                             "--order " + std::to_string(P) + " (" + std::to_string(D) + "D, " +
                                 (sizeof(T) == 4 ? "float" : "double") + "): P2M");
  if constexpr (bytes > 48 * 1024)  // 3D float from p = 17 on, double from p = 12 on (132 KB at double p = 20)
    NF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  std::uint32_t blocks = leaf.boxes;
  if (work) {
    int resident = 0;
    NF_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, S::kThreads, bytes));
    blocks = std::min<std::uint32_t>(leaf.boxes, std::max(resident, 1) * gpu::sm_count());
  }
  kernel<<<blocks, S::kThreads, bytes, gpu::launch_stream()>>>(sorted, leaf, g, M, work);
  NF_CUDA(cudaGetLastError());
}

template <int D, class T>
void p2m(const Body<T>* sorted, const DeviceLevel& leaf, const LeafGeometry& g, int p, T* M,
         std::uint64_t particles, gpu::Workspace* workspace) {
  if (leaf.boxes == 0) return;
  const bool small_off = p2m_small_off();
  const std::uint32_t limit = p2m_small_max();
  // Levels of more than `limit` particles a box on average (or of unknown count) keep a block per
  // box: with a limit of 32 the queue's larger boxes lost 4-6% to it (uniform 2^24 level 6, 64 a
  // box, p = 4, 6) and fmm-adaptive's leaves (about 200 a leaf) 21% (Plummer 2^22, p = 6; H200).
  if (p > kThreadBoxMaxOrder<D, T> || small_off || !workspace || particles == 0 ||
      particles > std::uint64_t(limit) * leaf.boxes) {
    dispatch_fixed_order(p, [&](auto order) {
      launch_p2m_tiles<D, T, decltype(order)::value>(sorted, leaf, g, M, nullptr);
    });
    return;
  }
  auto* work = static_cast<std::uint32_t*>(workspace->get((std::size_t(leaf.boxes) + 2) * sizeof(std::uint32_t)));
  NF_CUDA(cudaMemsetAsync(work, 0, 2 * sizeof(std::uint32_t), gpu::launch_stream()));
  // The small boxes a thread each, then the larger boxes from the list.
  dispatch_fixed_order(
      p,
      [&](auto order) {
        p2m_small_kernel<D, T, decltype(order)::value>
            <<<gpu::blocks_for(leaf.boxes, 128), 128, 0, gpu::launch_stream()>>>(sorted, leaf, g, M, work, limit);
        NF_CUDA(cudaGetLastError());
        launch_p2m_tiles<D, T, decltype(order)::value>(sorted, leaf, g, M, work);
      },
      std::make_integer_sequence<int, kThreadBoxMaxOrder<D, T>>{});
}

template <int D, class T>
void l2p(const Body<T>* sorted, const std::uint32_t* particle_box, std::uint32_t n, const DeviceLevel& leaf,
         const LeafGeometry& g, int p, const T* L, Acc4<T>* acc) {
  if (n == 0) return;
  dispatch_fixed_order(p, [&](auto order) {
    l2p_kernel<D, T, decltype(order)::value>
        <<<gpu::blocks_for(n, 128), 128, 0, gpu::launch_stream()>>>(sorted, particle_box, n, leaf, g, p, terms<D>(p), L, acc);
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
