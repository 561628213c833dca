// M2L by sibling groups (farfield/m2l_gpu.h): the plan of the warps' units, the operator tables,
// the pipeline shape and the launch (the kernel: farfield/m2l_group_kernel.cuh).
#include "farfield/m2l_gpu.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/cuda_check.cuh"
#include "core/launch.cuh"
#include "farfield/m2l_group_kernel.cuh"
#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

constexpr int kMaxWarps = 16;  // __launch_bounds__(512): up to 128 registers a thread

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
