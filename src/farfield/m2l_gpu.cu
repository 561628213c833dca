// M2L by sibling groups (farfield/m2l_gpu.h): the plan of the warps' units, the operator tables
// and the kernel.
#include "farfield/m2l_gpu.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <cuda_pipeline.h>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

constexpr std::uint32_t kNoBox = 0xffffffffu;  // no child c of a parent, no source at an offset
constexpr int kMaxWarps = 16;  // __launch_bounds__(512): up to 128 registers a thread

// Candidate offsets of one child position: 6 per axis.
template <int D>
constexpr int kCandidates = D == 3 ? 216 : 36;

// Units a warp owns: their accumulators (4 rows x TL targets each) live in registers.
template <int TL>
constexpr int kUnits = TL == 2 ? 6 : 10;

// A unit: row quad q (rows 4q .. 4q + 3) over columns n0 .. n1 - 1, packed q | n0 << 8 | n1 << 20
// (q < 256 and n < 4096 up to kMaxOrder), and the quad's first entry in the operator table.
int pack_unit(int q, int n0, int n1) { return q | n0 << 8 | n1 << 20; }

// The row quads' column counts and table offsets at order p.
template <int D>
void quads(int p, std::vector<int>& columns, std::vector<int>& start, int& table_size) {
  const int count = (terms<D>(p) + 3) / 4;
  columns.resize(count), start.resize(count);
  table_size = 0;
  for (int q = 0; q < count; ++q) {
    columns[q] = terms<D>(p - multi_index<D>(4 * q).degree());
    start[q] = table_size;
    table_size += 4 * columns[q];
  }
}

// Splits the quads' columns among `warps` warps of at most U units each, every warp taking about
// the same number of columns (contiguous runs, a quad split between neighbouring warps where it
// crosses a share). False when U units a warp are too few.
bool plan_units(const std::vector<int>& columns, const std::vector<int>& start, int warps, int U, std::vector<int>& plan) {
  long total = 0;
  for (int c : columns) total += c;
  for (long share = (total + warps - 1) / warps; share <= total; share += std::max(1L, share / 10)) {
    plan.assign(std::size_t(2) * warps * U, 0);
    int w = 0, u = 0;
    long load = 0;
    bool fits = true;
    for (std::size_t q = 0; q < columns.size() && fits; ++q) {
      for (int n = 0; n < columns[q];) {
        const long take = std::min<long>(columns[q] - n, share - load);
        if (take <= 0 || u == U) {
          if (++w == warps) {
            fits = false;
            break;
          }
          u = 0, load = 0;
          continue;
        }
        const std::size_t slot = std::size_t(w) * U + u;
        plan[2 * slot] = pack_unit(int(q), n, n + int(take));
        plan[2 * slot + 1] = start[q];
        ++u, load += take, n += int(take);
      }
    }
    if (fits) return true;
  }
  return false;
}

// Pipeline shapes (the kernel's Stages): 1, one offset's moments and table at a time; 2, the next
// offset's moments and table copied while this one is summed; 3 (where 2 do not fit), the next
// offset's moments copied during the sums and its table after them, into the one table buffer.
template <int D, class T>
std::size_t shared_bytes(int tl, int stages, int terms, int table_size) {
  const int TB = 32 * tl, S = TB + 2;
  const std::size_t moments = (std::size_t(terms) * S + 3) & ~std::size_t(3);
  const std::size_t operands = stages == 3 ? 2 * moments + table_size : stages * (moments + table_size);
  return operands * sizeof(T) + (TB + std::size_t(kCandidates<D>) * TB) * sizeof(std::uint32_t) +
         kCandidates<D> * sizeof(int);
}

// A positive integer from the environment variable `name`, or `otherwise`.
int env_int(const char* name, int otherwise) {
  const char* v = std::getenv(name);
  return v && std::atoi(v) > 0 ? std::atoi(v) : otherwise;
}

template <class T>
__device__ __forceinline__ void load4(const T* p, T (&t)[4]) {
  if constexpr (sizeof(T) == 4) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    t[0] = v.x, t[1] = v.y, t[2] = v.z, t[3] = v.w;
  } else {
    const double2 a = reinterpret_cast<const double2*>(p)[0], b = reinterpret_cast<const double2*>(p)[1];
    t[0] = a.x, t[1] = a.y, t[2] = b.x, t[3] = b.y;
  }
}

template <class T, int TL>
__device__ __forceinline__ void load_targets(const T* p, T (&m)[TL]) {
  if constexpr (TL == 1) {
    m[0] = p[0];
  } else if constexpr (sizeof(T) == 4) {
    const float2 v = *reinterpret_cast<const float2*>(p);
    m[0] = v.x, m[1] = v.y;
  } else {
    const double2 v = *reinterpret_cast<const double2*>(p);
    m[0] = v.x, m[1] = v.y;
  }
}

// ops[o][e] = sign * derivatives[o][|map[e]| - 1] (0 where map[e] = 0), for every offset o.
template <class T>
__global__ void expand_kernel(int table_size, int terms, const int* __restrict__ map, const T* __restrict__ derivatives,
                              T* __restrict__ ops) {
  const int o = blockIdx.y;
  for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < table_size; e += gridDim.x * blockDim.x) {
    const int m = map[e];
    const T d = m == 0 ? T(0) : derivatives[std::size_t(o) * terms + (m > 0 ? m : -m) - 1];
    ops[std::size_t(o) * table_size + e] = m < 0 ? -d : d;
  }
}

// Copies of 4, 8 or 16 bytes from global to shared memory that do not wait (cp.async): the next
// offset's operands arrive while this offset is computed. zero: fill the destination with zeros.
template <int Bytes>
__device__ __forceinline__ void copy_async(void* to, const void* from, bool zero) {
  __pipeline_memcpy_async(to, from, Bytes, zero ? Bytes : 0);
}

// One block: child c = blockIdx.x % 2^D of the TB parents from (blockIdx.x / 2^D) * TB (on an
// adaptive level: of the split parents listed from there, DeviceLevel::split), and the
// share blockIdx.y of gridDim.y of their offsets (more than one share only on levels too small to
// fill the GPU; the shares then add into L atomically). Slot s of the block is parent s's child c;
// lane l holds slots l * TL .. l * TL + TL - 1. Shared memory: per stage the moments of one offset's
// sources [term][slot] (stride TB + 2; stage 0 is reused for the locals at the end) and the
// offset's operator table; the slots' target ids; per (candidate, slot) the source's id (found
// once); the list of candidates that have a source. With 2 stages the next offset's operands are
// copied while the current one is computed.
template <int D, class T, int TL, int Stages>
__global__ void __launch_bounds__(512) group_kernel(DeviceLevel level, DeviceLevel parents, DeviceList list, int terms,
                                                     int table_size, const int* __restrict__ plan,
                                                     const T* __restrict__ ops, const T* __restrict__ M,
                                                     T* __restrict__ L) {
  constexpr int TB = 32 * TL, S = TB + 2, C = 1 << D, U = kUnits<TL>, kCand = kCandidates<D>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int moments_size = (terms * S + 3) & ~3;  // a multiple of 4: 16-byte aligned stages
  const int stage_size = moments_size + table_size;
  T* stages = reinterpret_cast<T*>(smem);
  // Stages 1 and 2: stage st holds moments then table; 3: moments 0, moments 1, then one table.
  const int operands = Stages == 3 ? 2 * moments_size + table_size : Stages * stage_size;
  std::uint32_t* target = reinterpret_cast<std::uint32_t*>(stages + operands);
  std::uint32_t* source = target + TB;
  int* active = reinterpret_cast<int*>(source + kCand * TB);
  __shared__ int active_count;
  const int tid = threadIdx.x, threads = blockDim.x, warp = tid / 32, lane = tid % 32, warps = threads / 32;
  const std::uint32_t c = blockIdx.x % C, first_parent = (blockIdx.x / C) * TB;
  // The parents whose children are targets: every box of a uniform level, the split ones of an
  // adaptive level (their count known on the device only: the grid covers every box).
  const std::uint32_t parent_count = parents.split ? *parents.split_count : parents.boxes;
  if (first_parent >= parent_count) return;  // the whole block
  std::uint32_t cc[D];
  morton_coords<D>(c, cc);

  for (int s = tid; s < TB; s += threads) {
    std::uint32_t t = kNoBox;
    const std::uint32_t g = first_parent + s, parent = parents.split && g < parent_count ? parents.split[g] : g;
    if (g < parent_count)
      for (std::uint32_t i = parents.child[parent]; i < parents.child[parent + 1]; ++i)
        if ((level.key[i] & (C - 1)) == c) {
          t = i;
          break;
        }
    target[s] = t;
  }
  for (int i = tid; i < kCand * TB; i += threads) source[i] = kNoBox;
  __syncthreads();
  for (int s = warp; s < TB; s += warps) {
    const std::uint32_t t = target[s];
    if (t == kNoBox) continue;
    std::uint32_t ct[D];
    morton_coords<D>(level.key[t], ct);
    const std::uint32_t begin = list.offset[t], end = list.offset[t + 1];
    for (std::uint32_t j = begin + lane; j < end; j += 32) {
      const std::uint32_t id = list.ids[j];
      std::uint32_t cs[D];
      morton_coords<D>(level.key[id], cs);
      int u = 0;  // R0 = ct - cs lies in cc - 3 .. cc + 2: digit R0 - cc + 3 in 0 .. 5
      for (int a = D - 1; a >= 0; --a) u = u * 6 + (int(ct[a]) - int(cs[a]) - int(cc[a]) + 3);
      source[u * TB + s] = id;
    }
  }
  __syncthreads();
  if (warp == 0) {  // the candidates with a source, in order, this block's share of them
    int count = 0;
    for (int base = 0; base < kCand; base += 32) {
      const int u = base + lane;
      bool any = false;
      if (u < kCand)
        for (int s = 0; s < TB && !any; ++s) any = source[u * TB + s] != kNoBox;
      const unsigned mask = __ballot_sync(0xffffffffu, any);
      if (any) active[count + __popc(mask & ((1u << lane) - 1))] = u;
      count += __popc(mask);
    }
    if (lane == 0) active_count = count;
  }
  __syncthreads();
  const int share_begin = int(blockIdx.y) * active_count / int(gridDim.y);
  const int share_end = int(blockIdx.y + 1) * active_count / int(gridDim.y);

  // Where stage st's moments and table live.
  auto moments_at = [&](int st) { return Stages == 3 ? stages + st * moments_size : stages + st * stage_size; };
  auto table_at = [&](int st) {
    return Stages == 3 ? stages + 2 * moments_size : stages + st * stage_size + moments_size;
  };
  // Candidate active[i]'s operator table into `to`, and its sources' moments into `to` (not committed).
  auto enqueue_table = [&](int i, T* to) {
    const int u = active[i];
    int o = 0;  // offset index sum_a (R0_a + 3) 7^a, R0_a + 3 = u's digit a + cc_a
    for (int a = 0, v = u, scale = 1; a < D; ++a, v /= 6, scale *= 7) o += (v % 6 + int(cc[a])) * scale;
    const T* table = ops + std::size_t(o) * table_size;
    constexpr int kPer = 16 / sizeof(T);  // table_size is a multiple of 4, every table 16-byte aligned
    for (int e = tid * kPer; e < table_size; e += threads * kPer) copy_async<16>(to + e, table + e, false);
  };
  auto enqueue_moments = [&](int i, T* to) {
    const int u = active[i];
    for (int s = warp; s < TB; s += warps) {  // a warp per slot: one source's moments, coalesced
      const std::uint32_t src = source[u * TB + s];
      const T* m = M + std::size_t(src == kNoBox ? 0 : src) * terms;
      for (int n = lane; n < terms; n += 32) copy_async<sizeof(T)>(to + n * S + s, m + n, src == kNoBox);
    }
  };
  // Both operands of candidate active[i] into stage st, committed as one group.
  auto enqueue = [&](int i, int st) {
    enqueue_table(i, table_at(st));
    enqueue_moments(i, moments_at(st));
    __pipeline_commit();
  };

  int unit[U], first[U];
#pragma unroll
  for (int v = 0; v < U; ++v) unit[v] = plan[2 * (warp * U + v)], first[v] = plan[2 * (warp * U + v) + 1];
  T acc[U][4][TL];
#pragma unroll
  for (int v = 0; v < U; ++v)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int i = 0; i < TL; ++i) acc[v][j][i] = T(0);

  if (share_begin < share_end) enqueue(share_begin, 0);
  for (int i = share_begin; i < share_end; ++i) {
    const int st = Stages >= 2 ? (i - share_begin) & 1 : 0;
    if (Stages >= 2 && i + 1 < share_end) {
      // Its stage (moments: Stages 3) was last read two offsets ago, before the barrier below.
      if (Stages == 2) {
        enqueue(i + 1, st ^ 1);
      } else {
        enqueue_moments(i + 1, moments_at(st ^ 1));
        __pipeline_commit();
      }
      __pipeline_wait_prior(1);  // all but that group: offset i's operands
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();  // every thread's copies into stage st have landed
    const T* Ms = moments_at(st);
    const T* Ts = table_at(st);
#pragma unroll
    for (int v = 0; v < U; ++v) {
      const int n1 = (unit[v] >> 20) & 0xfff;
      const T* quad = Ts + first[v];
      auto step = [&](int n) {
        T t[4], m[TL];
        load4(quad + 4 * n, t);
        load_targets<T, TL>(Ms + n * S + lane * TL, m);
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int i2 = 0; i2 < TL; ++i2) acc[v][j][i2] = fma(t[j], m[i2], acc[v][j][i2]);
      };
      const int n0 = (unit[v] >> 8) & 0xfff;
      if constexpr (sizeof(T) == 4) {  // unrolled: the loop's own instructions were a third of the issued ones
#pragma unroll 4
        for (int n = n0; n < n1; ++n) step(n);
      } else {  // double: unrolling spills
        for (int n = n0; n < n1; ++n) step(n);
      }
    }
    __syncthreads();  // stage st is free again
    if (Stages == 1 && i + 1 < share_end) enqueue(i + 1, 0);
    if (Stages == 3 && i + 1 < share_end) {  // the table buffer is free: the next offset's table
      enqueue_table(i + 1, table_at(0));
      __pipeline_commit();
    }
  }

  T* Lt = stages;
  for (int i = tid; i < terms * S; i += threads) Lt[i] = T(0);
  __syncthreads();
#pragma unroll
  for (int v = 0; v < U; ++v) {
    const int q = unit[v] & 0xff, n0 = (unit[v] >> 8) & 0xfff, n1 = (unit[v] >> 20) & 0xfff;
    if (n1 == n0) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (4 * q + j < terms)
#pragma unroll
        for (int i = 0; i < TL; ++i) atomicAdd(Lt + (4 * q + j) * S + lane * TL + i, acc[v][j][i]);
  }
  __syncthreads();
  for (int s = warp; s < TB; s += warps) {
    const std::uint32_t t = target[s];
    if (t == kNoBox) continue;
    T* out = L + std::size_t(t) * terms;
    if (gridDim.y == 1) {
      for (int n = lane; n < terms; n += 32) out[n] += Lt[n * S + s];
    } else {
      for (int n = lane; n < terms; n += 32) atomicAdd(out + n, Lt[n * S + s]);
    }
  }
}

}  // namespace

template <int D, class T>
template <class F>
void M2LOperators<D, T>::dispatch(F&& f) const {
  if (targets_per_lane_ == 2)
    stages_ == 3 ? f(group_kernel<D, T, 2, 3>) : stages_ == 2 ? f(group_kernel<D, T, 2, 2>) : f(group_kernel<D, T, 2, 1>);
  else
    stages_ == 3 ? f(group_kernel<D, T, 1, 3>) : stages_ == 2 ? f(group_kernel<D, T, 1, 2>) : f(group_kernel<D, T, 1, 1>);
}

template <int D, class T>
void M2LOperators<D, T>::reset(int p, int leaf) {
  derivatives_.assign(std::size_t(leaf) + 1, nullptr);
  if (p != p_) {
    p_ = p, terms_ = terms<D>(p), targets_per_lane_ = 0;
    std::vector<int> columns, start;
    quads<D>(p, columns, start, table_size_);
    const int count = int(columns.size());
    std::vector<int> plan;
    const int optin = gpu::shared_memory_optin();
    // NEARFIELD_M2L=direct|group1|group2 forces a kernel (for comparisons; default: see below).
    const char* forced = std::getenv("NEARFIELD_M2L");
    const std::string force = forced ? forced : "";
    struct Shape {
      int tl, warps, stages, blocks = 0;
      std::size_t bytes;
      std::vector<int> plan;
    };
    std::vector<Shape> shapes;  // the kernels that fit: two targets a lane first
    for (int tl : {2, 1}) {
      if (force == "direct" || (force == "group1" && tl == 2) || (force == "group2" && tl == 1)) continue;
      const int U = tl == 2 ? kUnits<2> : kUnits<1>;
      const std::size_t bytes = shared_bytes<D, T>(tl, 1, terms_, table_size_);
      if (bytes > std::size_t(optin)) continue;
      int w = std::max(8, (5 * count + 4 * U - 1) / (4 * U));  // about 1.25 quads' worth of units a warp
      while (w <= kMaxWarps && !plan_units(columns, start, w, U, plan)) ++w;
      if (w > kMaxWarps) continue;
      // Two stages (the next offset's operands copied during this one's sums) where they fit, else
      // the moments' two (shape 3) where they fit; NEARFIELD_M2L_STAGES=1 (or 2: no shape 3)
      // limits the shapes for comparisons.
      const int most = env_int("NEARFIELD_M2L_STAGES", 3);
      const std::size_t two = shared_bytes<D, T>(tl, 2, terms_, table_size_);
      const std::size_t three = shared_bytes<D, T>(tl, 3, terms_, table_size_);
      const int stages = most >= 2 && two <= std::size_t(optin) ? 2 : most >= 3 && three <= std::size_t(optin) ? 3 : 1;
      Shape s{tl, w, stages, 0, 0, plan};
      s.bytes = stages == 2 ? two : stages == 3 ? three : bytes;
      targets_per_lane_ = tl, stages_ = s.stages;  // the kernel dispatch() picks
      dispatch([&](auto kernel) {
        NF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(s.bytes)));
        NF_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&s.blocks, kernel, 32 * w, s.bytes));
      });
      shapes.push_back(std::move(s));
    }
    // Two targets a lane read each operator entry for two products, but keep twice the moments in
    // shared memory. They win where they keep as many blocks on an SM as one target does (H100,
    // uniform 2^24 at level 6, M2L ms with one / two: 3D float p = 4 10.4 / 7.9, p = 8 32.0 / 35.2
    // (2 blocks an SM against 1), p = 10 114.7 / 57.0 (1 and 1); 2D p = 14 1.67 / 1.36, p = 16
    // 2.04 / 2.23 (2 against 1)).
    targets_per_lane_ = 0;
    if (!shapes.empty()) {
      const Shape& pick = shapes.size() == 2 && shapes[0].blocks < shapes[1].blocks ? shapes[1] : shapes[0];
      targets_per_lane_ = pick.tl, warps_ = pick.warps, stages_ = pick.stages, shared_bytes_ = pick.bytes;
      plan = pick.plan;
    }
    if (grouped()) {
      // map[e]: +-(index(n + k) + 1), the sign (-1)^|n|; 0 where the entry is padding.
      std::vector<int> map(std::size_t(table_size_), 0);
      for (int q = 0; q < count; ++q)
        for (int n = 0; n < columns[q]; ++n)
          for (int j = 0; j < 4; ++j) {
            const int k = 4 * q + j;
            if (k >= terms_) continue;
            const MultiIndex mn = multi_index<D>(n), mk = multi_index<D>(k);
            if (mn.degree() + mk.degree() > p) continue;
            const int index1 = index<D>(mn + mk) + 1;
            map[std::size_t(start[q]) + 4 * n + j] = mn.degree() % 2 ? -index1 : index1;
          }
      plan_ = gpu::DeviceBuffer<int>(plan);
      map_ = gpu::DeviceBuffer<int>(map);
      dispatch([&](auto kernel) {
        NF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes_)));
      });
    }
  }
  const std::size_t need = grouped() ? (std::size_t(leaf) + 1) * kOffsets<D> * table_size_ : 0;
  if (ops_.size() < need) ops_ = gpu::DeviceBuffer<T>(need);
}

template <int D, class T>
void M2LOperators<D, T>::prepare(int p, const DeviceLevels& t, double softening) {
  const int K = t.leaf;
  reset(p, K);
  const std::size_t per_level = std::size_t(kOffsets<D>) * terms_;
  if (tables_.size() < std::size_t(K + 1) * per_level) tables_ = gpu::DeviceBuffer<T>(std::size_t(K + 1) * per_level);
  for (int l = 2; l <= K; ++l) {
    const double h = t.side(l);
    T* table = tables_.data() + std::size_t(l) * per_level;
    derivative_table<D, T>(p, T(softening * softening / (h * h)), table);
    build(l, table);
  }
}

template <int D, class T>
void M2LOperators<D, T>::build(int l, const T* derivatives) {
  derivatives_.at(std::size_t(l)) = derivatives;
  if (!grouped()) return;
  const dim3 grid(gpu::div_up(std::uint32_t(table_size_), 256), kOffsets<D>);
  expand_kernel<T><<<grid, 256>>>(table_size_, terms_, map_.data(), derivatives,
                                  ops_.data() + std::size_t(l) * kOffsets<D> * table_size_);
  NF_CUDA(cudaGetLastError());
}

template <int D, class T>
void M2LOperators<D, T>::apply(int l, const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list,
                               const T* M, T* L) {
  if (level.boxes == 0 || list.links == 0) return;
  if (!grouped()) {
    m2l<D, T>(level, list, p_, derivatives_.at(std::size_t(l)), M, L);
    return;
  }
  const T* ops = ops_.data() + std::size_t(l) * kOffsets<D> * table_size_;
  // An adaptive level's groups are formed over its split parents; NEARFIELD_M2L_GROUPS=all forms
  // them over every kept parent, as before (comparisons).
  DeviceLevel over = parents;
  const char* groups = std::getenv("NEARFIELD_M2L_GROUPS");
  if (groups && std::string(groups) == "all") over.split = nullptr, over.split_count = nullptr;
  const int tb = 32 * targets_per_lane_;
  const std::uint32_t blocks = (1u << D) * gpu::div_up(parents.boxes, std::uint32_t(tb));
  // A level with fewer blocks than two per SM splits its offsets among up to 8 blocks per group
  // (NEARFIELD_M2L_SPLITS forces a count): level 4 of a 3D tree has 128 blocks of TB = 32.
  const std::uint32_t want = 2 * std::uint32_t(gpu::sm_count());
  const std::uint32_t splits = std::uint32_t(env_int("NEARFIELD_M2L_SPLITS", int(std::clamp(gpu::div_up(want, blocks), 1u, 8u))));
  dispatch([&](auto kernel) {
    kernel<<<dim3(blocks, splits), 32 * warps_, shared_bytes_>>>(level, over, list, terms_, table_size_, plan_.data(), ops,
                                                                M, L);
  });
  NF_CUDA(cudaGetLastError());
}

template class M2LOperators<2, float>;
template class M2LOperators<2, double>;
template class M2LOperators<3, float>;
template class M2LOperators<3, double>;

}  // namespace nf::farfield
