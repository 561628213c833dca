// The far field's shifts between levels on the GPU (farfield/passes_gpu.h: m2m, l2l): M2M and
// L2L by parity classes (docs/design.md §16, "M2M and L2L by parity").
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <cstdlib>

#include "core/cuda_check.cuh"
#include "core/env.h"
#include "core/launch.cuh"
#include "farfield/l2p_fixed.cuh"
#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "tree/adaptive.h"
#include "farfield/shift_tables.h"
#include "farfield/shifts_line.cuh"
#include "farfield/shifts_thread.cuh"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

constexpr std::size_t kDefaultShared = 48 * 1024;  // dynamic shared memory without an opt-in

// Which kernel shifts `children` boxes into or out of `parents` at order p: a thread per child
// (thread_shifts) at the orders it runs at, where the children fill the GPU's resident threads;
// otherwise, in 3D, a line at a time (line_shifts: a block per 32 children, or fewer at high
// orders) from order kLineMinOrder on, and at kSparseLineMinOrder and above on sparse levels (fewer
// than kSparseChildren children a parent on average); else a block per parent summing the parity
// classes from tables (below). Measured on the H200 (docs/design.md §16, "Shifts by lines"): the
// lines won from 3D p = 10 on and at p = 8 on sparse levels (uniform 2^22 level 8, about 2 children
// a parent; Plummer 2^24 level 7, whose deepest shift has 4.2), lost at p = 8 on full levels (8
// children a parent) and at 3D p = 4 and 6, and in 2D (p = 8, 14).
// NEARFIELD_SHIFTS=thread|line|block forces one where it runs (thread up to its orders, the others
// everywhere; comparisons; read at each call, as the tests set it).
enum class ShiftKernel { thread, line, table };
constexpr int kLineMinOrder = 10, kSparseLineMinOrder = 8, kSparseChildren = 6;

template <int D, class T>
ShiftKernel shift_kernel_at(int p, std::uint32_t children, std::uint32_t parents) {
  const bool thread_order = p >= 1 && p <= kThreadBoxMaxOrder<D, T>;
  const std::string forced = forced_shifts();
  if (forced == "block") return ShiftKernel::table;
  if (forced == "line") return ShiftKernel::line;
  if (forced == "thread" && thread_order) return ShiftKernel::thread;
  static const std::uint64_t resident = std::uint64_t(gpu::sm_count()) * 2048;
  if (forced.empty() && thread_order && children >= resident) return ShiftKernel::thread;
  const bool sparse = std::uint64_t(children) < std::uint64_t(kSparseChildren) * parents;
  const bool lines = p >= kLineMinOrder || (p >= kSparseLineMinOrder && sparse);
  return D == 3 && lines ? ShiftKernel::line : ShiftKernel::table;
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

// The children of parent q by position (kNoChild where absent).
constexpr std::uint32_t kNoChild = 0xffffffffu;

template <int D>
__device__ void family(const DeviceLevel& fine, const DeviceLevel& coarse, std::uint32_t q, std::uint32_t* slot) {
  if (threadIdx.x < (1u << D)) slot[threadIdx.x] = kNoChild;
  __syncthreads();
  for (std::uint32_t ch = coarse.child[q] + threadIdx.x; ch < coarse.child[q + 1]; ch += blockDim.x)
    slot[child_position<D>(fine.key[ch])] = ch;
  __syncthreads();
}

// The block's share of a table's sums (ShiftLayout): this lane's products in order, each chunk's
// sum added into acc[out] when the lane's output changes (another lane may add into the same out).
template <class T>
__device__ __forceinline__ void table_sums(const ShiftTableView<T>& t, const T* x, T* acc) {
  constexpr int kBatch = 4;  // rows whose loads are in flight together
  const int w = threadIdx.x / 32;
  if (w >= t.warps) return;
  const ShiftEntry<T>* e = t.entries + t.first[w] + threadIdx.x % 32;
  const int rows = t.rows[w];
  int out = -1;
  T sum = T(0);
  for (int r0 = 0; r0 < rows; r0 += kBatch) {
    ShiftEntry<T> v[kBatch];
    T in[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j)  // past the last row: the row before's output, a zero factor
      v[j] = j == 0 || r0 + j < rows ? e[32 * (r0 + j)] : ShiftEntry<T>{v[j - 1].io, T(0)};
#pragma unroll
    for (int j = 0; j < kBatch; ++j) in[j] = x[v[j].io & 0xffffu];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int o = int(v[j].io >> 16);
      if (o != out) {
        if (out >= 0) atomicAdd(acc + out, sum);
        out = o, sum = T(0);
      }
      sum += v[j].coef * in[j];
    }
  }
  if (out >= 0) atomicAdd(acc + out, sum);
}

// One block per parent: the children's Walsh-combined moments S (shared, [pi][k]), the table's
// sums into the parent's terms (shared), added to the parent's moments.
template <int D, class T>
__global__ void m2m_kernel(DeviceLevel fine, DeviceLevel coarse, int terms, ShiftTableView<T> table,
                           const T* __restrict__ Mf, T* __restrict__ Mc) {
  constexpr int C = 1 << D;
  extern __shared__ __align__(16) unsigned char smem[];
  T* S = reinterpret_cast<T*>(smem);  // [C][terms]
  T* acc = S + C * terms;             // [outputs]
  __shared__ std::uint32_t slot[C];
  const std::uint32_t q = blockIdx.x;
  if (coarse.child[q] == coarse.child[q + 1]) return;  // no children (an adaptive tree's box that takes P2M)
  for (int n = threadIdx.x; n < table.outputs; n += blockDim.x) acc[n] = T(0);
  family<D>(fine, coarse, q, slot);
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
  table_sums(table, S, acc);
  __syncthreads();
  for (int n = threadIdx.x; n < terms; n += blockDim.x) Mc[std::size_t(q) * terms + n] += acc[n];
}

// One block per parent: its locals in shared memory, the table's sums T^pi_k (shared, [pi][k]),
// then per term the transposed butterflies give each child's L_k.
template <int D, class T>
__global__ void l2l_kernel(DeviceLevel coarse, DeviceLevel fine, int terms, ShiftTableView<T> table,
                           const T* __restrict__ Lc, T* __restrict__ Lf) {
  constexpr int C = 1 << D;
  extern __shared__ __align__(16) unsigned char smem[];
  T* Lp = reinterpret_cast<T*>(smem);  // [terms]
  T* acc = Lp + terms;                 // [outputs]: T^pi_k at pi * terms + k
  __shared__ std::uint32_t slot[C];
  const std::uint32_t q = blockIdx.x;
  // An adaptive tree: only split boxes pass locals down (their children are the targets).
  if (coarse.child[q] == coarse.child[q + 1] || (coarse.flags && !(coarse.flags[q] & adaptive::kSplit))) return;
  for (int n = threadIdx.x; n < terms; n += blockDim.x) Lp[n] = Lc[std::size_t(q) * terms + n];
  for (int n = threadIdx.x; n < table.outputs; n += blockDim.x) acc[n] = T(0);
  family<D>(fine, coarse, q, slot);
  table_sums(table, Lp, acc);
  __syncthreads();
  for (int k = threadIdx.x; k < terms; k += blockDim.x) {
    T v[C];
#pragma unroll
    for (int pi = 0; pi < C; ++pi) v[pi] = acc[pi * terms + k];
    butterflies<D, T>(v, false);
    const T scale = half_power<T>(multi_index<D>(k).degree() + 1);
#pragma unroll
    for (int i = 0; i < C; ++i)
      if (slot[i] != kNoChild) Lf[std::size_t(slot[i]) * terms + k] += v[i] * scale;
  }
}

}  // namespace

template <class T>
void ShiftTable<T>::upload(const ShiftLayout& layout) {
  // io packs the input and the output index in 16 bits each (inputs < outputs: 2^D x terms).
  if (layout.outputs > 0xffff) throw std::logic_error("shift table: more than 65535 outputs");
  std::vector<ShiftEntry<T>> entries(layout.entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ShiftLayout::Entry& e = layout.entries[i];
    entries[i] = {std::uint32_t(e.in) | std::uint32_t(e.out) << 16, T(e.coef)};
  }
  warps_ = layout.warps, outputs_ = layout.outputs;
  first_ = gpu::DeviceBuffer<int>(layout.first);
  rows_ = gpu::DeviceBuffer<int>(layout.rows);
  entries_ = gpu::DeviceBuffer<ShiftEntry<T>>(entries);
}

template <int D, class T>
void Shifts<D, T>::reset(int p) {
  check_pass_variables();
  if (p == p_) return;
  p_ = p, terms_ = terms<D>(p);
  // 3D from kLineMinOrder on shifts by lines on every level: the tables wait for a call that needs
  // them (NEARFIELD_SHIFTS=block, which the tests set at the call). Building them had cost a first
  // build up to 10 ms at p = 12 on the H200's host, for tables no kernel read. m2m and l2l are
  // const but may build them (mutable state): one thread drives a method at a time.
  if (D == 3 && p >= kLineMinOrder && forced_shifts() != "block") return;
  try {
    tables();
  } catch (...) {
    p_ = -1;  // not set up
    throw;
  }
}

template <int D, class T>
void Shifts<D, T>::tables() const {
  if (tables_p_ == p_) return;
  tables_p_ = -1;
  const ShiftLayout m2m = balance(m2m_lists<D>(p_)), l2l = balance(l2l_lists<D>(p_));
  // The tables' block's shared memory past this GPU's opt-in limit (3D double from p = 19 on a 99 KB
  // sm_86/89 card) had surfaced as a bare CUDA error mid-evaluation; refused before the tables are
  // uploaded and the table kernel first launches (the line kernel's rows take at most 48 KB).
  const std::size_t up = (std::size_t(1u << D) * terms_ + m2m.outputs) * sizeof(T);
  const std::size_t down = (std::size_t(terms_) + l2l.outputs) * sizeof(T);
  const std::string what = "--order " + std::to_string(p_) + " (" + std::to_string(D) + "D, " +
                           (sizeof(T) == 4 ? "float" : "double") + "): ";
  gpu::require_shared_memory(up, gpu::static_shared_bytes(m2m_kernel<D, T>), what + "M2M");
  gpu::require_shared_memory(down, gpu::static_shared_bytes(l2l_kernel<D, T>), what + "L2L");
  up_.upload(m2m);
  down_.upload(l2l);
  tables_p_ = p_;
}

template <int D, class T>
void Shifts<D, T>::m2m(const DeviceLevel& fine, const DeviceLevel& coarse, const T* M_fine, T* M_coarse) const {
  if (coarse.boxes == 0 || fine.boxes == 0) return;
  const ShiftKernel kernel = shift_kernel_at<D, T>(p_, fine.boxes, coarse.boxes);
  if (kernel == ShiftKernel::line) {
    line_shifts::m2m_kernel<D, T><<<gpu::blocks_for(fine.boxes, line_shifts::children_per_block<T>(terms_)),
                                    line_shifts::kThreads, line_shifts::row_bytes<T>(terms_), gpu::launch_stream()>>>(fine, coarse, p_, M_fine, M_coarse);
    NF_CUDA(cudaGetLastError());
    return;
  }
  if (kernel == ShiftKernel::thread) {
    dispatch_fixed_order(
        p_,
        [&](auto order) {
          thread_shifts::m2m_kernel<D, T, decltype(order)::value>
              <<<gpu::blocks_for(fine.boxes, thread_shifts::kShiftThreads), thread_shifts::kShiftThreads, 0, gpu::launch_stream()>>>(
                  fine, coarse, M_fine, M_coarse);
        },
        std::make_integer_sequence<int, kThreadBoxMaxOrder<D, T>>{});
    NF_CUDA(cudaGetLastError());
    return;
  }
  tables();
  const std::size_t bytes = (std::size_t(1u << D) * terms_ + up_.outputs()) * sizeof(T);
  if (bytes > kDefaultShared)
    NF_CUDA(cudaFuncSetAttribute(m2m_kernel<D, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  m2m_kernel<D, T><<<coarse.boxes, up_.threads(), bytes, gpu::launch_stream()>>>(fine, coarse, terms_, up_.view(), M_fine, M_coarse);
  NF_CUDA(cudaGetLastError());
}

template <int D, class T>
void Shifts<D, T>::l2l(const DeviceLevel& coarse, const DeviceLevel& fine, const T* L_coarse, T* L_fine) const {
  if (fine.boxes == 0 || coarse.boxes == 0) return;
  const ShiftKernel kernel = shift_kernel_at<D, T>(p_, fine.boxes, coarse.boxes);
  if (kernel == ShiftKernel::line) {
    line_shifts::l2l_kernel<D, T><<<gpu::blocks_for(fine.boxes, line_shifts::children_per_block<T>(terms_)),
                                    line_shifts::kThreads, line_shifts::row_bytes<T>(terms_), gpu::launch_stream()>>>(coarse, fine, p_, L_coarse, L_fine);
    NF_CUDA(cudaGetLastError());
    return;
  }
  if (kernel == ShiftKernel::thread) {
    dispatch_fixed_order(
        p_,
        [&](auto order) {
          thread_shifts::l2l_kernel<D, T, decltype(order)::value>
              <<<gpu::blocks_for(fine.boxes, thread_shifts::kShiftThreads), thread_shifts::kShiftThreads, 0, gpu::launch_stream()>>>(
                  coarse, fine, L_coarse, L_fine);
        },
        std::make_integer_sequence<int, kThreadBoxMaxOrder<D, T>>{});
    NF_CUDA(cudaGetLastError());
    return;
  }
  tables();
  const std::size_t bytes = (std::size_t(terms_) + down_.outputs()) * sizeof(T);
  if (bytes > kDefaultShared)
    NF_CUDA(cudaFuncSetAttribute(l2l_kernel<D, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  l2l_kernel<D, T><<<coarse.boxes, down_.threads(), bytes, gpu::launch_stream()>>>(coarse, fine, terms_, down_.view(), L_coarse, L_fine);
  NF_CUDA(cudaGetLastError());
}

template class ShiftTable<float>;
template class ShiftTable<double>;
template class Shifts<2, float>;
template class Shifts<2, double>;
template class Shifts<3, float>;
template class Shifts<3, double>;

}  // namespace nf::farfield
