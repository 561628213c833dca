// M2L a thread per target box (farfield/m2l_thread_gpu.h).
#include "farfield/m2l_thread_gpu.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>

#include "core/cuda_check.cuh"
#include "core/env.h"
#include "core/launch.cuh"
#include "farfield/multi_index.h"
#include "farfield/l2p_fixed.cuh"
#include "farfield/m2l_thread_sums.cuh"
#include "farfield/passes_gpu.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

using namespace thread_sums;

constexpr std::uint32_t kNone = 0xffffffffu;

// The level's derivative table in the wide variant's aligned rows (kOffsets x kAligned), padding 0.
template <class T, int P>
__global__ void align_kernel(const T* __restrict__ table, T* __restrict__ out) {
  constexpr int N = terms<3>(P), W = kAligned<T, P>;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kOffsets<3> * W; i += gridDim.x * blockDim.x) {
    const int o = i / W, j = i % W;
    int d = 0, b = 0;
    while (aligned_row<T>(d + 1, 0) <= j) ++d;
    while (b < d && aligned_row<T>(d, b + 1) <= j) ++b;
    const int z = j - aligned_row<T>(d, b);
    out[i] = z <= b ? table[o * N + row_start<3>(d, b) + z] : T(0);
  }
}

// The level's derivative table (Table: rows [0, kOffsets) of `out`) and, where terms is not a
// whole number of 16-byte loads, its moments copied to rows of kStride entries: one row a box,
// after the table's rows (or from `out` on, without the table).
template <int D, class T, int P, bool Table>
__global__ void pad_kernel(const T* __restrict__ table, const T* __restrict__ M, std::uint32_t boxes, T* __restrict__ out) {
  constexpr int N = terms<D>(P), S = kStride<D, T, P>;
  constexpr std::uint64_t first = Table ? 0 : kOffsets<D>;  // the rows run from `first`
  const std::uint64_t rows = std::uint64_t(kOffsets<D>) + (S == N ? 0 : boxes) - first;
  for (std::uint64_t i = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * S;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t r = i / S + first;
    const int n = int(i % S);
    const T* from = r < std::uint64_t(kOffsets<D>) ? table + r * N : M + (r - kOffsets<D>) * N;
    out[i] = n < N ? from[n] : T(0);
  }
}

// The lists grouped by order (the orders per offset, wide variant): the offset index of R0 = target
// - source, sum_a (R0_a + 3) 7^a, and its squared length.
template <int D>
__device__ __forceinline__ int offset_index(const std::uint32_t (&ct)[D], std::uint64_t key, int& r2) {
  std::uint32_t cs[D];
  morton_coords<D>(key, cs);
  int o = 0;
  r2 = 0;
#pragma unroll
  for (int a = D - 1; a >= 0; --a) {
    const int r = int(ct[a]) - int(cs[a]);
    o = o * 7 + r + 3, r2 += r * r;
  }
  return o;
}

// A class of an entry is the rank of its order among the orders present, highest first.
__device__ __forceinline__ int order_class(unsigned present, int q) { return __popc(present >> (q + 1)); }

// A thread per box of the level: its list's entries grouped by class into ids (same range as in
// list.ids, each class in list order) and the count of each class, 8 bits a class, into counts[b].
template <int D>
__global__ void classes_kernel(DeviceLevel level, DeviceList list, OffsetOrders orders, unsigned present,
                               std::uint32_t* __restrict__ ids, std::uint64_t* __restrict__ counts) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= level.boxes) return;
  std::uint32_t ct[D];
  morton_coords<D>(level.key[b], ct);
  const std::uint32_t begin = list.offset[b], end = list.offset[b + 1];
  std::uint64_t count = 0;  // a list holds at most 189 entries: a class count fits in 8 bits
  for (std::uint32_t j = begin; j < end; ++j) {
    int r2;
    offset_index<D>(ct, level.key[list.ids[j]], r2);
    count += std::uint64_t(1) << (8 * order_class(present, orders.q[r2]));
  }
  counts[b] = count;
  std::uint64_t at = 0;  // each class's next place, 8 bits a class: the sum of the classes before it
  for (int c = 1; c < 8; ++c) at += count << 8 * c;
  for (std::uint32_t j = begin; j < end; ++j) {
    const std::uint32_t id = list.ids[j];
    int r2;
    offset_index<D>(ct, level.key[id], r2);
    const int c = order_class(present, orders.q[r2]);
    ids[begin + ((at >> 8 * c) & 0xff)] = id;
    at += std::uint64_t(1) << (8 * c);
  }
}

// f(id, o) for the entries j0 .. j1 - 1 of ids, in order. The list is read ahead: entry j + 2's id
// and entry j + 1's key are loaded while entry j is summed, so that of the chain id -> key ->
// operands only the operands' loads wait (M2L 1-9% faster at 3D p = 2..6 on the H200; its time is
// not mostly that chain's latency).
template <int D, class F>
__device__ __forceinline__ void walk(const DeviceLevel& level, const std::uint32_t* __restrict__ ids,
                                     const std::uint32_t (&ct)[D], std::uint32_t j0, std::uint32_t j1, F&& f) {
  std::uint32_t id = j0 < j1 ? ids[j0] : 0, next = j0 + 1 < j1 ? ids[j0 + 1] : id;
  std::uint64_t key = j0 < j1 ? level.key[id] : 0;
  for (std::uint32_t j = j0; j < j1; ++j) {
    const std::uint64_t key_next = level.key[next];
    const std::uint32_t after = j + 2 < j1 ? ids[j + 2] : next;
    int r2;
    f(id, offset_index<D>(ct, key, r2));
    id = next, next = after, key = key_next;
  }
}

// 16-byte copies from global to shared memory that do not wait (cp.async through the L1, which keeps
// the moments' lines: a level's source is read by up to 189 targets, many of them on one SM).
__device__ __forceinline__ void copy16(std::uint32_t to, const void* from) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(from) : "memory");
}
__device__ __forceinline__ void copies_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void copies_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// A staged row: its 16-byte chunks, and its stride in chunks in shared memory (odd, so that the 8
// lanes of a quarter warp start their 16-byte loads in different banks).
template <int D, class T, int P>
constexpr int kChunks = kStride<D, T, P> * int(sizeof(T)) / 16;
template <int D, class T, int P>
constexpr int kStagedRow = kChunks<D, T, P> | 1;

// walk with the sources' moments staged by the warp (docs/design.md §16, "Staged moments"): at each
// step the 32 lanes' rows are copied by the whole warp into `stage` (this warp's 32 rows of
// kStagedRow chunks), 32 consecutive chunks an instruction: a few rows, so a few cache lines, where
// a lane reading its own row touches 32 lines an instruction. The next step's copies are issued
// right after this step's sums; the other warps of the SM run during their flight (a second buffer,
// copies in flight during the sums, was 2-7% slower on Plummer 2^24 level 7 and within 6% either
// way on uniform 2^24 level 6, H200). f(row in shared memory, o) for each of the lane's entries j0
// .. j1 - 1 in order; every lane of the warp takes part (j0 == j1 for one without a target).
template <int D, class T, int P, class F>
__device__ __forceinline__ void walk_staged(const DeviceLevel& level, const std::uint32_t* __restrict__ ids,
                                            const std::uint32_t (&ct)[D], std::uint32_t j0, std::uint32_t j1,
                                            const T* __restrict__ M, float4* stage, F&& f) {
  constexpr int Q = kChunks<D, T, P>, R = kStagedRow<D, T, P>, S = kStride<D, T, P>;
  constexpr unsigned kAll = 0xffffffffu;
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t n = j1 - j0, steps = __reduce_max_sync(kAll, n);
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(stage));
  const auto issue = [&](std::uint32_t id) {  // the warp's rows of one step (id kNone: the lane has none)
#pragma unroll
    for (int r = 0; r < Q; ++r) {
      const int i = int(lane) + 32 * r, row = i / Q, q = i - row * Q;
      const std::uint32_t from = __shfl_sync(kAll, id, row);
      if (from != kNone) copy16(base + 16u * std::uint32_t(row * R + q), M + std::size_t(from) * S + q * kVec<T>);
    }
    copies_commit();
  };
  std::uint32_t id = n > 0 ? ids[j0] : kNone, next = n > 1 ? ids[j0 + 1] : kNone;
  std::uint64_t key = id != kNone ? level.key[id] : 0;
  if (steps > 0) issue(id);
  for (std::uint32_t j = 0; j < steps; ++j) {
    const std::uint64_t key_next = next != kNone ? level.key[next] : 0;
    const std::uint32_t after = j + 2 < n ? ids[j0 + j + 2] : kNone;
    copies_wait_all();
    __syncwarp();  // every lane's copies of this step have landed
    if (id != kNone) {
      int r2;
      f(reinterpret_cast<const T*>(stage + lane * R), offset_index<D>(ct, key, r2));
    }
    __syncwarp();  // every lane is done with the rows the next copies overwrite
    if (j + 1 < steps) issue(next);
    id = next, next = after, key = key_next;
  }
}

// Warp w of the grid takes child c = w % 2^D of the 32 parents from (w / 2^D) * 32, a lane each;
// blockIdx.y of gridDim.y: its share of each list (shares add into L atomically). PerOffset (the
// wide variant where the orders per offset apply): the translation across offset R keeps the terms
// |n| + |k| <= orders(R) <= P; `present` has bit q set for each order q some offset takes, and
// `ids`, `counts` hold the lists grouped by class (classes_kernel). A thread walks its list class
// by class, so a warp runs one order's unrolled sums at a time (list.ids otherwise). Staged: the
// sources' moments staged by the warp in dynamic shared memory (walk_staged; at the orders of
// kStagedOrder), otherwise read by each lane from global memory (walk).
template <int D, class T, int P, bool PerOffset, bool Staged>
__global__ void __launch_bounds__(256) thread_kernel(DeviceLevel level, DeviceLevel parents, DeviceList list,
                                                      unsigned present, const std::uint32_t* __restrict__ ids,
                                                      const std::uint64_t* __restrict__ counts,
                                                      const T* __restrict__ table, const T* __restrict__ M,
                                                      T* __restrict__ L) {
  constexpr int N = terms<D>(P), S = kStride<D, T, P>, C = 1 << D;
  extern __shared__ float4 thread_stages[];
  const std::uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  const std::uint32_t c = w % C, g = (w / C) * 32 + lane;
  const std::uint32_t parent_count = parents.split ? *parents.split_count : parents.boxes;
  std::uint32_t t = kNone;
  if (g < parent_count) {
    const std::uint32_t parent = parents.split ? parents.split[g] : g;
    for (std::uint32_t i = parents.child[parent]; i < parents.child[parent + 1]; ++i)
      if ((level.key[i] & (C - 1)) == c) {
        t = i;
        break;
      }
  }
  static_assert(!Staged || P <= kThreadMaxOrder<D, T>, "the wide variant reads its moments itself");
  // Staged, the lanes without a target still copy the others' rows.
  if (Staged ? __all_sync(0xffffffffu, t == kNone) : t == kNone) return;
  std::uint32_t ct[D] = {};
  if (t != kNone) morton_coords<D>(level.key[t], ct);
  const std::uint32_t begin = t != kNone ? list.offset[t] : 0, count = t != kNone ? list.offset[t + 1] - begin : 0;
  const std::uint32_t y = blockIdx.y, shares = gridDim.y;
  // f(m, o) over entries j0 .. j1 - 1 of `from`, m the source's moments.
  const auto walk_list = [&](const std::uint32_t* from, std::uint32_t j0, std::uint32_t j1, auto&& f) {
    if constexpr (Staged)
      walk_staged<D, T, P>(level, from, ct, j0, j1, M,
                           thread_stages + (threadIdx.x / 32) * 32 * kStagedRow<D, T, P>, f);
    else
      walk<D>(level, from, ct, j0, j1, [&](std::uint32_t id, int o) { f(M + std::size_t(id) * S, o); });
  };
  T acc[N];
#pragma unroll
  for (int k = 0; k < N; ++k) acc[k] = T(0);
  if constexpr (PerOffset) {
    static_assert(D == 3 && P > kThreadMaxOrder<D, T>, "the orders per offset run in the wide variant");
    const std::uint64_t sizes = t != kNone ? counts[t] : 0;
    std::uint32_t first = begin;
    int k = 0;  // class
    static_for<0, P + 1>([&](auto I) {
      constexpr int Q = P - decltype(I)::value;
      if (!(present >> Q & 1u)) return;
      const std::uint32_t n = std::uint32_t(sizes >> (8 * k++)) & 0xffu;
      walk_list(ids, first + n * y / shares, first + n * (y + 1) / shares, [&](const T* m, int o) {
        translate_wide<T, Q>(m, table + o * kAligned<T, P>, acc);
      });
      first += n;
    });
  } else {
    walk_list(list.ids, begin + count * y / shares, begin + count * (y + 1) / shares, [&](const T* m, int o) {
      if constexpr (P > kThreadMaxOrder<D, T>) {  // the wide variant
        translate_wide<T, P>(m, table + o * kAligned<T, P>, acc);
      } else {
        T d[S];
        load_row<S>(table + o * S, d);
        translate<D, T, P, Staged>(m, d, acc);
      }
    });
  }
  if (t == kNone) return;
  T* out = L + std::size_t(t) * N;
  if (shares == 1) {
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] += acc[k];
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) atomicAdd(out + k, acc[k]);
  }
}

// Entries of scratch at order P: the derivative table (padded rows, or the wide variant's aligned
// ones), then the padded moments where terms is not a whole number of 16-byte loads.
template <int D, class T>
std::size_t table_entries(int p) {
  if (p > kThreadMaxOrder<D, T>) return std::size_t(kOffsets<D>) * std::size_t(aligned_row<T>(p + 1, 0));
  return std::size_t(kOffsets<D>) * std::size_t(thread_row_stride(terms<D>(p), int(sizeof(T))));
}

// The thread kernel over the level's targets, a block of kThreads threads.
constexpr int kThreads = 256;

// Where the moments are staged at all: farfield/m2l_thread_orders.h's thread_staged_order (the
// chunks there are kChunks).
template <int D, class T, int P>
constexpr bool kStagedOrder = thread_staged_order(D, int(sizeof(T)), P);
static_assert(kStagedOrder<3, float, 6> && !kStagedOrder<3, float, 7> && kStagedOrder<3, double, 4> &&
              !kStagedOrder<3, double, 5> && kStagedOrder<2, float, 8> && !kStagedOrder<2, float, 10>);

// The shared memory a block's staged moments take at order P (3D float p = 4: 37 KB, p = 6: 86 KB).
template <int D, class T, int P>
constexpr std::size_t kStageBytes = std::size_t(kThreads / 32) * 32 * kStagedRow<D, T, P> * 16;

template <int D, class T, int P, bool PerOffset, bool Staged>
void run_thread_kernel(const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list, unsigned present,
                       const std::uint32_t* ids, const std::uint64_t* counts, const T* table, const T* M, T* L) {
  constexpr std::size_t bytes = Staged ? kStageBytes<D, T, P> : 0;
  // The opt-in belongs to the current device's context: set at every launch (a second GPU of the
  // process would otherwise refuse the launch).
  if (bytes > 0)
    NF_CUDA(cudaFuncSetAttribute(thread_kernel<D, T, P, PerOffset, Staged>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(bytes)));
  static const int resident = [] {  // blocks an SM
    int blocks = 0;
    NF_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, thread_kernel<D, T, P, PerOffset, Staged>, kThreads,
                                                          bytes));
    return std::max(blocks, 1);
  }();
  const std::uint64_t threads = std::uint64_t(32) * (1u << D) * gpu::div_up(parents.boxes, 32u);
  const std::uint32_t blocks = std::uint32_t(gpu::div_up(std::uint32_t(threads), kThreads));
  // Levels with fewer threads than the GPU holds split each list (up to 8 shares).
  const std::uint64_t holds = std::uint64_t(resident) * std::uint64_t(kThreads) * std::uint64_t(gpu::sm_count());
  const std::uint32_t splits = std::uint32_t(std::clamp<std::uint64_t>((holds + threads - 1) / threads, 1, 8));
  thread_kernel<D, T, P, PerOffset, Staged>
      <<<dim3(blocks, splits), kThreads, bytes, gpu::launch_stream()>>>(level, parents, list, present, ids, counts, table, M, L);
  NF_CUDA(cudaGetLastError());
}

// The orders the list offsets R take (|R_a| <= 3, some |R_a| >= 2), a bit each.
template <int D>
unsigned orders_present(const OffsetOrders& orders) {
  unsigned present = 0;
  for (int i = 0; i < kOffsets<D>; ++i) {
    int r2 = 0;
    bool far = false;
    for (int a = 0, v = i; a < D; ++a, v /= 7) r2 += (v % 7 - 3) * (v % 7 - 3), far = far || v % 7 < 2 || v % 7 > 4;
    if (far) present |= 1u << orders[r2];
  }
  return present;
}

// Whether the wide variant walks the lists by order at order P: the orders per offset apply from
// kOffsetOrdersFrom multiply-adds a translation on (3D p >= 8).
template <int D, class T, int P>
constexpr bool kByOrder = (P > kThreadMaxOrder<D, T>) && coefficient_pairs(D, P) >= kOffsetOrdersFrom;

// run_thread_kernel with the moments staged or not (`staged`: m2l_thread_gpu.h); never at the
// orders kStagedOrder leaves out, nor where the device's shared memory does not hold them. The rule
// was measured on the H200 only: on a GPU with less shared memory an SM may hold fewer staged blocks
// (3D float p = 6 takes 86 KB a block). On an adaptive level the fill counts every kept parent, not
// only the split ones the warps take (docs/design.md §16), so it can understate the warps' fill.
template <int D, class T, int P, bool PerOffset>
void run_staged_or_not(Staging staged, const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list,
                       unsigned present, const std::uint32_t* ids, const std::uint64_t* counts, const T* table,
                       const T* M, T* L) {
  const double fill = level_fill(D, level.boxes, parents.boxes);
  const bool stage = kStagedOrder<D, T, P> && kStageBytes<D, T, P> <= std::size_t(gpu::shared_memory_optin()) &&
                     (staged == Staging::on || (staged == Staging::by_fill && fill >= kStagedFill));
  if (!env::value("NEARFIELD_M2L_VERBOSE").empty())
    std::fprintf(stderr, "m2l thread: %u boxes, %u parents, fill %.3f, %s\n", level.boxes, parents.boxes, fill,
                 stage ? "staged" : "unstaged");
  if constexpr (kStagedOrder<D, T, P>) {
    if (stage)
      return run_thread_kernel<D, T, P, PerOffset, true>(level, parents, list, present, ids, counts, table, M, L);
  }
  run_thread_kernel<D, T, P, PerOffset, false>(level, parents, list, present, ids, counts, table, M, L);
}

template <int D, class T, int P>
void launch(Staging staged, const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list,
            const OffsetOrders& orders, const T* table, const T* M, T* L, T* scratch, std::uint32_t* classes) {
  // 256 threads a block (kThreads): 128 measured within +-5% of it, either way by order (H200, 3D
  // uniform 2^24 level 6 and Plummer level 7, p = 2..6).
  constexpr int N = terms<D>(P), S = kStride<D, T, P>;
  constexpr bool Wide = P > kThreadMaxOrder<D, T>;
  const unsigned present = orders_present<D>(orders);
  const bool by_order = present != 1u << P;
  if (by_order && !kByOrder<D, T, P>)
    throw std::logic_error("m2l_thread: orders per offset where none apply");
  if (__builtin_popcount(present) > 8) throw std::logic_error("m2l_thread: more than 8 orders per offset");
  const std::size_t entries = table_entries<D, T>(P);
  if constexpr (Wide) {
    static_assert(D == 3, "the wide variant is 3D");
    align_kernel<T, P><<<gpu::blocks_for(std::uint64_t(entries), kThreads), kThreads, 0, gpu::launch_stream()>>>(table, scratch);
    NF_CUDA(cudaGetLastError());
    if (S != N) {
      const std::uint64_t rows = level.boxes;
      pad_kernel<D, T, P, false><<<gpu::blocks_for(rows * S, kThreads), kThreads, 0, gpu::launch_stream()>>>(table, M, level.boxes, scratch + entries);
    }
  } else {
    const std::uint64_t rows = std::uint64_t(kOffsets<D>) + (S == N ? 0 : level.boxes);
    pad_kernel<D, T, P, true><<<gpu::blocks_for(rows * S, kThreads), kThreads, 0, gpu::launch_stream()>>>(table, M, level.boxes, scratch);
  }
  NF_CUDA(cudaGetLastError());
  const T* padded_M = S == N ? M : scratch + entries;
  if constexpr (kByOrder<D, T, P>) {
    if (by_order) {
      auto* counts = reinterpret_cast<std::uint64_t*>(classes);
      std::uint32_t* ids = classes + 2 * std::size_t(level.boxes);
      classes_kernel<D><<<gpu::blocks_for(level.boxes, 128), 128, 0, gpu::launch_stream()>>>(level, list, orders, present, ids, counts);
      NF_CUDA(cudaGetLastError());
      return run_staged_or_not<D, T, P, true>(staged, level, parents, list, present, ids, counts, scratch, padded_M,
                                              L);
    }
  }
  run_staged_or_not<D, T, P, false>(staged, level, parents, list, present, nullptr, nullptr, scratch, padded_M, L);
}

}  // namespace

template <int D, class T>
void m2l_thread(int p, Staging staged, const OffsetOrders& orders, const DeviceLevel& level, const DeviceLevel& parents,
                const DeviceList& list, const T* derivatives, const T* M, T* L, T* scratch, std::uint32_t* classes) {
  if (level.boxes == 0 || list.links == 0 || parents.boxes == 0) return;
  dispatch_fixed_order(
      p,
      [&](auto order) {
        launch<D, T, decltype(order)::value>(staged, level, parents, list, orders, derivatives, M, L, scratch, classes);
      },
      std::make_integer_sequence<int, kWideMaxOrder<D, T>>{});
}

template <int D, class T>
std::size_t m2l_thread_class_words(int p, const OffsetOrders& orders, std::uint32_t boxes, std::uint32_t links) {
  const bool by_order = p > kThreadMaxOrder<D, T> && orders_present<D>(orders) != 1u << p;
  return by_order ? 2 * std::size_t(boxes) + links : 0;
}

template <int D, class T>
std::size_t m2l_thread_scratch(int p, std::uint32_t boxes) {
  const int n = terms<D>(p), stride = thread_row_stride(n, int(sizeof(T)));
  return table_entries<D, T>(p) + (stride == n ? 0 : std::size_t(stride) * boxes);
}

template void m2l_thread<2, float>(int, Staging, const OffsetOrders&, const DeviceLevel&, const DeviceLevel&, const DeviceList&,
                                     const float*, const float*, float*, float*, std::uint32_t*);
template std::size_t m2l_thread_class_words<2, float>(int, const OffsetOrders&, std::uint32_t, std::uint32_t);
template std::size_t m2l_thread_scratch<2, float>(int, std::uint32_t);
template void m2l_thread<2, double>(int, Staging, const OffsetOrders&, const DeviceLevel&, const DeviceLevel&, const DeviceList&,
                                     const double*, const double*, double*, double*, std::uint32_t*);
template std::size_t m2l_thread_class_words<2, double>(int, const OffsetOrders&, std::uint32_t, std::uint32_t);
template std::size_t m2l_thread_scratch<2, double>(int, std::uint32_t);
template void m2l_thread<3, float>(int, Staging, const OffsetOrders&, const DeviceLevel&, const DeviceLevel&, const DeviceList&,
                                     const float*, const float*, float*, float*, std::uint32_t*);
template std::size_t m2l_thread_class_words<3, float>(int, const OffsetOrders&, std::uint32_t, std::uint32_t);
template std::size_t m2l_thread_scratch<3, float>(int, std::uint32_t);
template void m2l_thread<3, double>(int, Staging, const OffsetOrders&, const DeviceLevel&, const DeviceLevel&, const DeviceList&,
                                     const double*, const double*, double*, double*, std::uint32_t*);
template std::size_t m2l_thread_class_words<3, double>(int, const OffsetOrders&, std::uint32_t, std::uint32_t);
template std::size_t m2l_thread_scratch<3, double>(int, std::uint32_t);

}  // namespace nf::farfield
