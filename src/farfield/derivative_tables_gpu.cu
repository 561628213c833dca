// The derivative tables of M2L on the GPU (farfield/passes_gpu.h: derivative_tables), every level
// of a tree in one launch.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "physics/interaction.h"

namespace nf::farfield {
namespace {

// The derivative tables of up to kTableLevels levels in one launch.
constexpr int kTableLevels = 64;
template <class T>
struct LevelEps2 {
  T v[kTableLevels];
};

// Shared memory of table_kernel: two levels of the recursion and a step word per term.
template <class T>
std::size_t table_shared_bytes(int terms) {
  return 2 * std::size_t(terms) * sizeof(T) + std::size_t(terms) * sizeof(std::uint32_t);
}

// A warp per offset (blockIdx.x) and level (blockIdx.y, eps2.v[blockIdx.y]): the recursion of
// farfield/derivatives.h (the same products, the same terms), level m by level m with every term of
// a level at once, a lane per term, from the level above it in shared memory (two buffers in turn);
// level 0 goes straight to the table. A thread per offset had run the whole recursion as one chain
// of dependent loads: about 0.1 ms a launch in 3D at p = 10 (H200), a launch per level and step.
template <int D, class T>
__global__ void __launch_bounds__(32) table_kernel(int p, LevelEps2<T> eps2, int terms, T* __restrict__ tables) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* prev = reinterpret_cast<T*>(smem);
  T* cur = prev + terms;
  // step[i], for the term n at i (|n| >= 1) and a its first axis with n_a >= 1: index(n - e_a),
  // index(n - 2 e_a) + 1 (0: n_a = 1) << 12, a << 24, n_a - 1 << 26 (terms <= 1771 < 2^11).
  auto* step = reinterpret_cast<std::uint32_t*>(cur + terms);
  __shared__ T F[kMaxOrder + 1];  // F_m(|R|^2), as derivatives() computes them
  const int o = blockIdx.x, lane = threadIdx.x;
  T r[D];
  bool adjacent = true;
  for (int a = 0, v = o; a < D; ++a, v /= 7) {
    const int d = v % 7 - 3;
    r[a] = T(d);
    adjacent = adjacent && d >= -1 && d <= 1;
  }
  T* out = tables + (std::size_t(blockIdx.y) * kOffsets<D> + o) * terms;
  if (adjacent) {
    for (int n = lane; n < terms; n += 32) out[n] = T(0);
    return;
  }
  for (int i = 1 + lane; i < terms; i += 32) {
    const MultiIndex n = multi_index<D>(i);
    const int a = n.x ? 0 : n.y ? 1 : 2;
    const MultiIndex n1 = n - unit(a);
    const std::uint32_t i2 = n[a] >= 2 ? std::uint32_t(index<D>(n1 - unit(a))) + 1 : 0;
    step[i] = std::uint32_t(index<D>(n1)) | i2 << 12 | std::uint32_t(a) << 24 | std::uint32_t(n[a] - 1) << 26;
  }
  if (lane == 0) {
    T s = r[0] * r[0] + eps2.v[blockIdx.y];
    for (int a = 1; a < D; ++a) s = r[a] * r[a] + s;
    const T inv = reciprocal_sqrt(s);
    const T inv2 = inv * inv;
    F[0] = inv;
    for (int m = 1; m <= p; ++m) F[m] = T(1 - 2 * m) * inv2 * F[m - 1];
  }
  __syncwarp();
  for (int m = p; m >= 0; --m) {
    T* to = m == 0 ? out : cur;
    const int count = nf::farfield::terms<D>(p - m);
    for (int i = lane; i < count; i += 32) {
      T v = F[m];
      if (i > 0) {
        const std::uint32_t st = step[i];
        const int a = (st >> 24) & 3;
        const T ra = a == 0 ? r[0] : a == 1 ? r[1] : r[D - 1];
        const std::uint32_t i1 = st & 0xfff, i2 = (st >> 12) & 0xfff;
        v = i2 ? ra * prev[i1] + T(st >> 26) * prev[i2 - 1] : ra * prev[i1];
      }
      to[i] = v;
    }
    __syncwarp();
    T* t = prev;
    prev = cur, cur = t;
  }
}

}  // namespace

template <int D, class T>
void derivative_tables(int p, const std::vector<T>& eps2, T* tables) {
  const int count_terms = terms<D>(p);
  const std::size_t bytes = table_shared_bytes<T>(count_terms);  // <= 35 KB (3D double, p = 20)
  for (std::size_t first = 0; first < eps2.size(); first += kTableLevels) {
    LevelEps2<T> e{};
    const std::size_t count = std::min<std::size_t>(kTableLevels, eps2.size() - first);
    std::copy_n(eps2.begin() + std::ptrdiff_t(first), count, e.v);
    table_kernel<D, T><<<dim3(kOffsets<D>, unsigned(count)), 32, bytes>>>(p, e, count_terms,
                                                                           tables + first * kOffsets<D> * count_terms);
    NF_CUDA(cudaGetLastError());
  }
}

template void derivative_tables<2, float>(int, const std::vector<float>&, float*);
template void derivative_tables<2, double>(int, const std::vector<double>&, double*);
template void derivative_tables<3, float>(int, const std::vector<float>&, float*);
template void derivative_tables<3, double>(int, const std::vector<double>&, double*);

}  // namespace nf::farfield
