// The far field's shifts between levels on the GPU (farfield/passes_gpu.h: m2m, l2l): M2M and
// L2L by parity classes (docs/design.md §16, "M2M and L2L by parity").
#include <algorithm>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

constexpr std::size_t kDefaultShared = 48 * 1024;  // dynamic shared memory without an opt-in

// A thread per term, at least 64 (the set-up's children and shift factors), at most 256.
template <int D>
int pass_threads(int p) {
  return std::clamp((terms<D>(p) + 31) / 32 * 32, 64, 256);
}

// 2^-k in T (ratio^k for the ratio 1/2 of a child's side to its parent's).
template <class T>
__device__ T half_power(int k) {
  return T(1) / T(1u << k);
}

// M2M and L2L between a parent and its children, with the shift's parity folded in. A child's
// centre is s = sigma / 4 parent sides from its parent's (sigma_a = +-1: the child's coordinate
// bit a), so the factor s^j / j! of a shift by j is sigma^j c_j with c_j = prod_a 4^-j_a / j_a!, and
// sigma^j depends only on the parities pi of j. Summing the children first under each parity's
// signs (a Walsh-Hadamard transform over the 2^D children: D butterflies) leaves one shift
// per parity, so a parent costs one child's work, not 2^D children's:
//   M2M: Mp_n = sum_pi sum_{j <= n, j = pi mod 2} c_j S^pi_{n-j},  S^pi_k = 2^-|k| sum_ch sigma_ch^pi M^ch_k;
//   L2L: L^ch_k = 2^-(|k|+1) sum_pi sigma_ch^pi T^pi_k,  T^pi_k = sum_{j = pi mod 2} c_j Lp_{k+j}.

// Position of a child in its parent: bit a = the child's coordinate bit a.
template <int D>
__device__ int child_position(std::uint64_t key) {
  std::uint32_t c[D];
  morton_coords<D>(key, c);
  int pos = 0;
  for (int a = 0; a < D; ++a) pos |= int(c[a] & 1) << a;
  return pos;
}

// v[pi] = sum_pos sigma_pos^pi v[pos] (forward = true; sigma_a = -1 for bit 0, +1 for bit 1) or
// its transpose v[pos] = sum_pi sigma_pos^pi v[pi] (forward = false).
template <int D, class T>
__device__ __forceinline__ void butterflies(T (&v)[1 << D], bool forward) {
#pragma unroll
  for (int a = 0; a < D; ++a)
#pragma unroll
    for (int i = 0; i < (1 << D); ++i)
      if (!(i & (1 << a))) {
        const T lo = v[i], hi = v[i | (1 << a)];
        v[i] = forward ? lo + hi : lo - hi;
        v[i | (1 << a)] = forward ? hi - lo : lo + hi;
      }
}

// The children of parent q by position (kNoChild where absent) and c_j = 4^-j / j!, j <= p.
constexpr std::uint32_t kNoChild = 0xffffffffu;

template <int D, class T>
__device__ void family(const DeviceLevel& fine, const DeviceLevel& coarse, std::uint32_t q, int p,
                       std::uint32_t* slot, T* c) {
  if (threadIdx.x < (1u << D)) slot[threadIdx.x] = kNoChild;
  if (int(threadIdx.x) <= p) {
    T v = T(1);
    for (int j = 1; j <= int(threadIdx.x); ++j) v *= T(0.25) / T(j);
    c[threadIdx.x] = v;
  }
  __syncthreads();
  for (std::uint32_t ch = coarse.child[q] + threadIdx.x; ch < coarse.child[q + 1]; ch += blockDim.x)
    slot[child_position<D>(fine.key[ch])] = ch;
  __syncthreads();
}

// One block per parent: the children's Walsh-combined moments S (shared, [pi][k]), then a thread
// per parent term n.
template <int D, class T>
__global__ void m2m_kernel(DeviceLevel fine, DeviceLevel coarse, int p, int terms, const T* __restrict__ Mf,
                           T* __restrict__ Mc) {
  constexpr int C = 1 << D;
  extern __shared__ __align__(16) unsigned char smem[];
  T* S = reinterpret_cast<T*>(smem);  // [C][terms]
  T* c = S + C * terms;               // [p + 1]
  __shared__ std::uint32_t slot[C];
  const std::uint32_t q = blockIdx.x;
  family<D, T>(fine, coarse, q, p, slot, c);
  for (int k = threadIdx.x; k < terms; k += blockDim.x) {
    T v[C];
#pragma unroll
    for (int i = 0; i < C; ++i) v[i] = slot[i] == kNoChild ? T(0) : Mf[std::size_t(slot[i]) * terms + k];
    butterflies<D, T>(v, true);
    const T scale = half_power<T>(multi_index<D>(k).degree());
#pragma unroll
    for (int i = 0; i < C; ++i) S[i * terms + k] = v[i] * scale;
  }
  __syncthreads();
  for (int n = threadIdx.x; n < terms; n += blockDim.x) {
    const MultiIndex ni = multi_index<D>(n);
    T sum = T(0);
#pragma unroll
    for (int pi = 0; pi < C; ++pi) {
      const T* s = S + pi * terms;
      for (int jx = pi & 1; jx <= ni.x; jx += 2)
        for (int jy = (pi >> 1) & 1; jy <= ni.y; jy += 2) {
          const T cxy = c[jx] * c[jy];
          if constexpr (D == 3) {
            for (int jz = (pi >> 2) & 1; jz <= ni.z; jz += 2)
              sum += cxy * c[jz] * s[index<3>({ni.x - jx, ni.y - jy, ni.z - jz})];
          } else {
            sum += cxy * s[index<2>({ni.x - jx, ni.y - jy, 0})];
          }
        }
    }
    Mc[std::size_t(q) * terms + n] += sum;
  }
}

// One block per parent: its locals in shared memory, a thread per term k computing T^pi_k for
// every parity in registers, then the transposed butterflies give each child's L_k.
template <int D, class T>
__global__ void l2l_kernel(DeviceLevel coarse, DeviceLevel fine, int p, int terms, const T* __restrict__ Lc,
                           T* __restrict__ Lf) {
  constexpr int C = 1 << D;
  extern __shared__ __align__(16) unsigned char smem[];
  T* Lp = reinterpret_cast<T*>(smem);  // [terms]
  T* c = Lp + terms;                   // [p + 1]
  __shared__ std::uint32_t slot[C];
  const std::uint32_t q = blockIdx.x;
  for (int n = threadIdx.x; n < terms; n += blockDim.x) Lp[n] = Lc[std::size_t(q) * terms + n];
  family<D, T>(fine, coarse, q, p, slot, c);
  for (int k = threadIdx.x; k < terms; k += blockDim.x) {
    const MultiIndex ki = multi_index<D>(k);
    const int rest = p - ki.degree();
    T v[C];
#pragma unroll
    for (int pi = 0; pi < C; ++pi) {
      T sum = T(0);
      for (int jx = pi & 1; jx <= rest; jx += 2)
        for (int jy = (pi >> 1) & 1; jx + jy <= rest; jy += 2) {
          const T cxy = c[jx] * c[jy];
          if constexpr (D == 3) {
            for (int jz = (pi >> 2) & 1; jx + jy + jz <= rest; jz += 2)
              sum += cxy * c[jz] * Lp[index<3>({ki.x + jx, ki.y + jy, ki.z + jz})];
          } else {
            sum += cxy * Lp[index<2>({ki.x + jx, ki.y + jy, 0})];
          }
        }
      v[pi] = sum;
    }
    butterflies<D, T>(v, false);
    const T scale = half_power<T>(ki.degree() + 1);
#pragma unroll
    for (int i = 0; i < C; ++i)
      if (slot[i] != kNoChild) Lf[std::size_t(slot[i]) * terms + k] += v[i] * scale;
  }
}

}  // namespace

template <int D, class T>
void m2m(const DeviceLevel& fine, const DeviceLevel& coarse, int p, const T* M_fine, T* M_coarse) {
  if (coarse.boxes == 0) return;
  const std::size_t bytes = (std::size_t(1u << D) * terms<D>(p) + p + 1) * sizeof(T);
  if (bytes > kDefaultShared)
    NF_CUDA(cudaFuncSetAttribute(m2m_kernel<D, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  m2m_kernel<D, T><<<coarse.boxes, pass_threads<D>(p), bytes>>>(fine, coarse, p, terms<D>(p), M_fine, M_coarse);
  NF_CUDA(cudaGetLastError());
}

template <int D, class T>
void l2l(const DeviceLevel& coarse, const DeviceLevel& fine, int p, const T* L_coarse, T* L_fine) {
  if (fine.boxes == 0 || coarse.boxes == 0) return;
  const std::size_t bytes = (std::size_t(terms<D>(p)) + p + 1) * sizeof(T);
  l2l_kernel<D, T><<<coarse.boxes, pass_threads<D>(p), bytes>>>(coarse, fine, p, terms<D>(p), L_coarse, L_fine);
  NF_CUDA(cudaGetLastError());
}

#define NF_SHIFTS(D, T)                                                                 \
  template void m2m<D, T>(const DeviceLevel&, const DeviceLevel&, int, const T*, T*); \
  template void l2l<D, T>(const DeviceLevel&, const DeviceLevel&, int, const T*, T*);
NF_SHIFTS(2, float)
NF_SHIFTS(2, double)
NF_SHIFTS(3, float)
NF_SHIFTS(3, double)
#undef NF_SHIFTS

}  // namespace nf::farfield
