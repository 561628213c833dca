// M2L by sibling groups (farfield/m2l_gpu.h): the plan of the warps' units, the operator tables,
// the pipeline shape and the launch (the kernel: farfield/m2l_group_kernel.cuh).
#include "farfield/m2l_gpu.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/cuda_check.cuh"
#include "core/env.h"
#include "core/errors.h"
#include "core/launch.cuh"
#include "farfield/m2l_group_kernel.cuh"
#include "farfield/m2l_group_plan.h"
#include "farfield/m2l_thread_gpu.h"
#include "farfield/multi_index.h"
#include "farfield/op_counts.h"
#include "farfield/passes_gpu.h"
#include "tree/morton.h"

namespace nf::farfield {
namespace {

using namespace m2l_plan;
static_assert(kMaxWarps * kUnits<1> <= 256, "a plan's quads are packed in 8 bits");
static_assert(kUnits<1> == 10, "group_kernel_fits (m2l_group_plan.h) plans slices of 10 units a warp");

static_assert(kChunk == kGroupChunk, "the plans deal out the kernel's chunks of columns");
static_assert(kCandidates<2> == candidates(2) && kCandidates<3> == candidates(3), "the plans' candidate counts");

// The kernel's dynamic shared memory (m2l_group_plan.h: group_shared_bytes).
template <int D, class T>
std::size_t shared_bytes(int tl, int stages, int terms, int table_size, int words) {
  return group_shared_bytes(D, int(sizeof(T)), tl, stages, terms, table_size, words);
}

// NEARFIELD_M2L_PROBE=copies|sums (comparisons only: the locals are then wrong) runs the group
// kernel with only its operands' copies and barriers (1), or only its sums (2): how much of its
// time each takes, and how much they overlap (results/fmm-m2l-probe). Checked at every prepare,
// before any work; read at every launch.
int m2l_probe() {
  const std::string name = env::choice("NEARFIELD_M2L_PROBE", {"copies", "sums"});
  return name == "copies" ? 1 : name == "sums" ? 2 : 0;
}

// The comparison variables' counts (core/env.h refuses any other value): NEARFIELD_M2L_STAGES=S,
// at most S operand stages (the tensor-core kernel's ring takes 1..4; the group kernel's shapes stop
// at 3, so 4 runs them as 3 does);
// NEARFIELD_M2L_SPLITS=S, the blocks a sibling group's offsets are split among.
int stages_limit(int otherwise) { return int(env::integer("NEARFIELD_M2L_STAGES", 1, 4, otherwise)); }
int forced_splits(int otherwise) { return int(env::integer("NEARFIELD_M2L_SPLITS", 1, 64, otherwise)); }
// The comparison variables' words ("": the default), each read here only.
std::string forced_kernel() {
  return env::choice("NEARFIELD_M2L", {"thread", "group", "group1", "group2", "direct", "tensor"});
}
std::string staged_setting() { return env::choice("NEARFIELD_M2L_STAGED", {"on", "off"}); }
std::string rows_setting() { return env::choice("NEARFIELD_M2L_ROWS", {"4", "8"}); }
std::string groups_setting() { return env::choice("NEARFIELD_M2L_GROUPS", {"split", "all"}); }
std::string plan_setting() { return env::choice("NEARFIELD_M2L_PLAN", {"contiguous", "balanced"}); }
std::string levels_setting() { return env::choice("NEARFIELD_M2L_LEVELS", {"streams", "coarse", "serial"}); }
// NEARFIELD_M2L_MOMENTS=bf16|float: the group kernel packs its float moments wherever its plan is
// balanced / never (comparisons; by default where m2l_plan::packs_moments says).
std::string moments_setting() { return env::choice("NEARFIELD_M2L_MOMENTS", {"bf16", "float"}); }

// ops[o][e] = sign * derivatives[o][|map[e]| - 1] (0 where map[e] = 0 or the entry's degree |n| +
// |k| passes offset o's order), for every offset o (index sum_a (R_a + 3) 7^a) of the level
// blockIdx.z (its derivative and operator tables at that many level strides). Four consecutive
// entries a thread (table_size is a multiple of 4, every table 16-byte aligned): one 16-byte load
// of their map, one of their degrees, 16-byte stores (a thread an entry had run at a third of the
// memory bandwidth).
template <int D, class T>
__global__ void expand_kernel(int table_size, int terms, const int* __restrict__ map,
                              const unsigned char* __restrict__ degree, OffsetOrders orders,
                              const T* __restrict__ derivatives, T* __restrict__ ops) {
  const int o = blockIdx.y;
  derivatives += (std::size_t(blockIdx.z) * kOffsets<D> + o) * terms;
  ops += (std::size_t(blockIdx.z) * kOffsets<D> + o) * table_size;
  int R[D];
  for (int a = 0, v = o; a < D; ++a, v /= 7) R[a] = v % 7 - 3;
  const int order = orders.at<D>(R);
  for (int e = 4 * (blockIdx.x * blockDim.x + threadIdx.x); e < table_size; e += 4 * gridDim.x * blockDim.x) {
    const int4 m4 = *reinterpret_cast<const int4*>(map + e);
    const uchar4 g4 = *reinterpret_cast<const uchar4*>(degree + e);
    const int ms[4] = {m4.x, m4.y, m4.z, m4.w};
    const unsigned char gs[4] = {g4.x, g4.y, g4.z, g4.w};
    T v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int m = gs[j] > order ? 0 : ms[j];
      const T d = m == 0 ? T(0) : derivatives[(m > 0 ? m : -m) - 1];
      v[j] = m < 0 ? -d : d;
    }
    if constexpr (sizeof(T) == 4) {
      *reinterpret_cast<float4*>(ops + e) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
      reinterpret_cast<double2*>(ops + e)[0] = make_double2(v[0], v[1]);
      reinterpret_cast<double2*>(ops + e)[1] = make_double2(v[2], v[3]);
    }
  }
}

}  // namespace

template <int D, class T>
template <class F>
void M2LOperators<D, T>::dispatch(int targets_per_lane, int stages, int rows, bool packed, F&& f) {
  auto by_shape = [&](auto r, auto pk) {
    constexpr int R = decltype(r)::value;
    constexpr bool P = decltype(pk)::value;
    if (targets_per_lane == 2)
      stages == 3 ? f(group_kernel<D, T, 2, 3, R, P>) : stages == 2 ? f(group_kernel<D, T, 2, 2, R, P>) : f(group_kernel<D, T, 2, 1, R, P>);
    else
      stages == 3 ? f(group_kernel<D, T, 1, 3, R, P>) : stages == 2 ? f(group_kernel<D, T, 1, 2, R, P>) : f(group_kernel<D, T, 1, 1, R, P>);
  };
  using Plain = std::false_type;
  if constexpr (std::is_same_v<T, float>) {  // two quads a unit and packed moments: float only
    if (packed)
      return rows == 8 ? by_shape(std::integral_constant<int, 8>{}, std::true_type{})
                       : by_shape(std::integral_constant<int, 4>{}, std::true_type{});
    if (rows == 8) return by_shape(std::integral_constant<int, 8>{}, Plain{});
  }
  by_shape(std::integral_constant<int, 4>{}, Plain{});
}

// The chunks a balanced plan deals a quad's columns out in (m2l_group_plan.h, plan_pieces): float
// takes the kernel's chunk of 4 columns; double keeps contiguous pieces (0), its loop a column at a
// time (dealt out, M2L at 3D double p = 10 took 95.1 against 82.9 ms; H200, results/fmm-m2l-dealt).
template <class T>
constexpr int kPlanChunk = std::is_same_v<T, float> ? kGroupChunk : 0;

void check_far_field_variables() {
  check_pass_variables();
  check_offset_order_variables();
  m2l_probe(), stages_limit(0), forced_splits(0);
  forced_kernel(), staged_setting(), rows_setting(), groups_setting(), plan_setting(), levels_setting();
  moments_setting();
}

template <int D, class T>
void M2LOperators<D, T>::reset(int p, int leaf) {
  // A wrong value of a comparison variable refused before any state changes.
  check_far_field_variables();
  const OffsetOrders orders = offset_orders(D, p);
  derivatives_.assign(std::size_t(leaf) + 1, nullptr);
  // The kernel choice is checked before any state changes (a forced tensor-core kernel that does
  // not fit this order is refused after the plan was cleared), and p_ is recorded only once the new
  // plan is complete: a caller that catches an error and prepares again re-plans.
  const std::string force = forced_kernel();
  if (force == "tensor" && !std::is_same_v<T, float>)
    throw UsageError("NEARFIELD_M2L=tensor: the tensor-core kernel runs float only (this run is double)");
  // The thread kernel stages each step's moments through shared memory by the warp on well-filled
  // levels (m2l_thread_gpu.h); NEARFIELD_M2L_STAGED=on|off forces it on every level or none.
  const std::string stage = staged_setting();
  staged_ = stage == "on" ? Staging::on : stage == "off" ? Staging::off : Staging::by_fill;
  // NEARFIELD_M2L_ROWS=4|8: the sibling-group kernel's rows a unit at every shape (below).
  const std::string rows_force = rows_setting();
  if (rows_force == "8" && !std::is_same_v<T, float>)
    throw UsageError("NEARFIELD_M2L_ROWS=8: two quads a unit run in float only (this run is double)");
  if (p != p_ || !std::equal(std::begin(orders.q), std::end(orders.q), std::begin(orders_.q))) {
    p_ = -1, orders_ = orders, terms_ = terms<D>(p);
    packed_from_ = words_ = terms_;  // nothing packed unless the group kernel's plan below packs
    slices_.clear();
    // The thread-per-target kernel is the default at every order it is built for: it was faster in
    // every case measured (H200, scripts/m2l-compare.sh, results/fmm-m2l-thread; M2L time thread /
    // group: 3D float uniform 2^24 levels 5 and 6 and Plummer 2^24 level 7 at p = 2..6, 0.07-0.50;
    // 2D float clusters 2^22 level 9 at p = 4..12, 0.28-0.43; 3D double p = 2..4, 0.18-0.33; 2D
    // double p = 4..8, 0.32-0.36). NEARFIELD_M2L=group|group1|group2|direct forces another.
    // Its wide variant (3D float p = 7..8, double p = 5..6) keeps only the locals in registers; at
    // 3D float p = 8 it takes the orders per offset too, each list walked an order at a time (H200,
    // M2L ms group / wide: float uniform 2^24 level 6 p = 7 23.8 / 8.6, p = 8 18.9 / 11.8; Plummer
    // 2^24 level 7 p = 7 86.4 / 17.2, p = 8 70.5 / 25.2; double uniform 2^22 level 6 p = 5
    // 19.4 / 7.5, p = 6 30.2 / 13.9).
    threaded_ = p >= 1 && p <= kWideMaxOrder<D, T> && (force.empty() || force == "thread");
    tensor_.clear();
    if constexpr (std::is_same_v<T, float>) {
      if (!threaded_ && (force == "tensor" || (force.empty() && tensor_by_default(D, p)))) {
        if (tensor_.reset(p, orders)) {
          if (!env::value("NEARFIELD_M2L_VERBOSE").empty())
            std::fprintf(stderr, "m2l: %dD float p = %d: sibling groups on the tensor cores\n", D, p);
          p_ = p;
          return;
        }
        if (force == "tensor")
          throw UsageError("NEARFIELD_M2L=tensor: order " + std::to_string(p) + " in " + std::to_string(D) +
                           "D does not fit the tensor-core kernel (its moments in shared memory, or its row tiles)");
      }
    }
    if (threaded_) {
      if (!env::value("NEARFIELD_M2L_VERBOSE").empty())
        std::fprintf(stderr, "m2l: %dD %s p = %d: a thread per target\n", D, sizeof(T) == 4 ? "float" : "double", p);
      p_ = p;
      return;
    }
    const auto classes = order_classes<D>(orders);
    std::vector<int> plan;
    // The dynamic shared memory a block may take: the opt-in limit less the kernel's static arrays
    // (the same in every instance).
    const int optin = gpu::shared_memory_optin() - int(gpu::static_shared_bytes(group_kernel<D, T, 1, 1>));
    // NEARFIELD_M2L=direct|group|group1|group2 forces a kernel (for comparisons; default: see below).
    // The balanced plan where the orders per offset apply (kOffsetOrdersFrom: 3D p >= 8, 2D p >= 14),
    // the contiguous one below (H100, 3D float uniform 2^24 level 6, M2L ms, contiguous /
    // balanced, orders p at every offset: p = 4 8.0 / 14.6, p = 6 12.3 / 18.4, p = 8 32.0 / 31.0,
    // p = 10 57.4 / 56.0, level 5 p = 12 26.5 / 22.2). NEARFIELD_M2L_PLAN=contiguous|balanced
    // forces one (comparisons).
    const std::string plan_kind = plan_setting();
    const bool balanced = plan_kind == "balanced" || (plan_kind != "contiguous" && coefficient_pairs(D, p) >= kOffsetOrdersFrom);
    // Moments of 16 bits (packed_from, docs/design.md §16): float, balanced plans (chunks from
    // multiples of kGroupChunk), where packs_moments says or under NEARFIELD_M2L_MOMENTS=bf16.
    const std::string moments = moments_setting();
    const bool pack = moments == "bf16" || (moments.empty() && packs_moments(D, int(sizeof(T)), p));
    packed_from_ = std::is_same_v<T, float> && balanced && pack ? packed_from(D, p) : terms_;
    words_ = packed_words(terms_, packed_from_);
    // Packed, a unit's chunks are read as two word rows: its first column (as F) a multiple of the chunk.
    auto check_packed = [&](const std::vector<int>& units) {
      if (words_ == terms_) return;
      for (std::size_t u = 0; u < units.size(); u += 2)
        if (((units[u] >> 8) & 0xfff) % kGroupChunk != 0 || packed_from_ % kGroupChunk != 0)
          throw std::logic_error("M2L plan: a unit starts off a chunk of columns, which packed moments need");
    };
    // Rows a unit: one quad, or two (8 rows) in float where they were measured faster, so that each
    // moment read from shared memory serves 8 multiply-adds instead of 4 (docs/design.md §16, "Two
    // quads a unit"; H200, results/fmm-m2l-rows, M2L two / one: 2D clusters 2^22 p = 13..20
    // 0.91-0.95; 3D p = 12 (one target a lane) 0.95-0.98; 3D p = 9 and 10 (two) 1.00, p = 11 1.02).
    // NEARFIELD_M2L_ROWS=4|8 forces one at every shape where the whole table fits (comparisons; 8 in
    // float only; slices keep one quad).
    auto rows_at = [&](int tl) {
      if (!rows_force.empty()) return std::stoi(rows_force);
      return std::is_same_v<T, float> && (D == 2 || (tl == 1 && p >= 12)) ? 8 : 4;
    };
    struct Shape {
      int tl, rows, warps, stages, blocks = 0;
      std::size_t bytes;
      std::vector<int> plan;
      Quads<D> tiles;  // the operator tables' row tiles of `rows` rows
    };
    std::vector<Shape> shapes;  // the kernels that fit: two targets a lane first
    for (int tl : {2, 1}) {
      if (force == "direct" || (force == "group1" && tl == 2) || (force == "group2" && tl == 1)) continue;
      const int rows = rows_at(tl);
      const Quads<D> tiles(p, rows, 1, rows);
      const int U = (tl == 2 ? kUnits<2> : kUnits<1>) * 4 / rows;
      const std::size_t bytes = shared_bytes<D, T>(tl, 1, terms_, tiles.table_size, words_);
      if (bytes > std::size_t(optin)) continue;
      const int w = balanced ? best_plan<D>(tiles, classes, U, plan, kPlanChunk<T>) : contiguous_plan<D>(tiles, U, plan);
      if (w == 0) continue;
      // Two stages (the next offset's operands copied during this one's sums) where they fit, else
      // the moments' two (shape 3) where they fit; NEARFIELD_M2L_STAGES=1 (or 2: no shape 3)
      // limits the shapes for comparisons.
      const int most = stages_limit(3);
      // The stage count follows the float moments' room even where they are packed: the deeper
      // shapes that packed stages fit were slower (docs/design.md §16 "Moments of 16 bits"; one
      // stage's fit and the blocks an SM take the packed bytes, which at the default orders picks
      // the float moments' shapes too).
      const std::size_t two = shared_bytes<D, T>(tl, 2, terms_, tiles.table_size, terms_);
      const std::size_t three = shared_bytes<D, T>(tl, 3, terms_, tiles.table_size, terms_);
      const int stages = most >= 2 && two <= std::size_t(optin) ? 2 : most >= 3 && three <= std::size_t(optin) ? 3 : 1;
      Shape s{tl, rows, w, stages, 0, 0, plan, tiles};
      s.bytes = stages == 1 ? bytes : shared_bytes<D, T>(tl, stages, terms_, tiles.table_size, words_);
      dispatch(tl, s.stages, rows, words_ < terms_, [&](auto kernel) {
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
    Quads<D> quads(p);  // the operator tables' row tiles: the chosen shape's, else quads (slices)
    int rows = 4;
    if (!shapes.empty()) {
      const Shape& pick = shapes.size() == 2 && shapes[0].blocks < shapes[1].blocks ? shapes[1] : shapes[0];
      quads = pick.tiles, rows = pick.rows, table_size_ = quads.table_size;
      Slice one;
      one.size = table_size_, one.warps = pick.warps, one.targets_per_lane = pick.tl, one.stages = pick.stages;
      check_packed(pick.plan);
      one.rows = rows, one.shared_bytes = pick.bytes, one.plan = gpu::DeviceBuffer<int>(pick.plan);
      slices_.push_back(std::move(one));
      if (!env::value("NEARFIELD_M2L_VERBOSE").empty())  // the shape this order runs (comparisons)
        std::fprintf(stderr, "m2l: %dD %s p = %d: %d target(s) a lane, %d rows a unit, %d warps, pipeline shape %d, %d block(s) an SM, %s plan, moments %d float + %d bfloat16\n",
                     D, sizeof(T) == 4 ? "float" : "double", p, pick.tl, rows, pick.warps, pick.stages, pick.blocks,
                     balanced ? "balanced" : "contiguous", packed_from_, terms_ - packed_from_);
    }
    if (slices_.empty() && force != "direct") {
      // Slices: the row quads cut, in order, where the next would pass the table's room beside one
      // target a lane's moments in one stage, or the units of kMaxWarps warps (the moments' two
      // stages, shape 3, leave room for about one quad at 3D float p = 14: one stage). Each slice
      // copies every moment again; past kMostSlices the older kernel runs (slice_cuts).
      table_size_ = quads.table_size;
      const int U = kUnits<1>;
      const std::vector<std::pair<int, int>> cut =
          slice_cuts<D>(quads, std::size_t(optin), int(sizeof(T)), terms_, U);
      for (const auto& [q0, q1] : cut) {
        const Quads<D> part = quads.range(q0, q1);
        const int w = balanced ? best_plan<D>(part, classes, U, plan, kPlanChunk<T>) : contiguous_plan<D>(part, U, plan);
        if (w == 0) {  // not planned: the fallback
          slices_.clear();
          break;
        }
        Slice sl;
        sl.begin = quads.start[std::size_t(q0)], sl.size = quads.end(q1 - 1) - sl.begin, sl.first_quad = q0;
        sl.warps = w, sl.targets_per_lane = 1, sl.stages = 1;
        sl.shared_bytes = shared_bytes<D, T>(1, 1, terms_, sl.size, words_);
        check_packed(plan);
        sl.plan = gpu::DeviceBuffer<int>(plan);
        slices_.push_back(std::move(sl));
      }
      if (!env::value("NEARFIELD_M2L_VERBOSE").empty() && grouped())
        std::fprintf(stderr, "m2l: %dD %s p = %d: %zu slices of the row quads, pipeline shape 1, %s plan, moments %d float + %d bfloat16\n", D,
                     sizeof(T) == 4 ? "float" : "double", p, slices_.size(), balanced ? "balanced" : "contiguous",
                     packed_from_, terms_ - packed_from_);
    }
    if (grouped()) {
      const OperatorMap m = operator_map<D>(p, quads, rows);  // the tables' layout (m2l_group_plan.h)
      map_ = gpu::DeviceBuffer<int>(m.map);
      degree_ = gpu::DeviceBuffer<unsigned char>(m.degree);
      chunk_order_ = gpu::DeviceBuffer<unsigned char>(m.chunk_order);  // (apply sets each launch's memory limit)
    }
    p_ = p;
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
  if (K < 2) return;
  // Levels 2..K in one launch each for the derivatives and the operator tables (a launch a level
  // had cost the simulation's step about 0.1 ms a level in 3D at p = 10, docs/design.md §16).
  std::vector<T> eps2;
  for (int l = 2; l <= K; ++l) {
    const double h = t.side(l);
    eps2.push_back(T(softening * softening / (h * h)));
    derivatives_.at(std::size_t(l)) = tables_.data() + std::size_t(l) * per_level;
  }
  derivative_tables<D, T>(p, eps2, tables_.data() + 2 * per_level);
  if constexpr (std::is_same_v<T, float>)
    if (tensor_.ready()) tensor_.prepare(tables_.data(), per_level, K);
  if (!grouped()) return;
  const dim3 grid(gpu::div_up(std::uint32_t(table_size_ / 4), 256), kOffsets<D>, unsigned(K - 1));
  expand_kernel<D, T><<<grid, 256>>>(table_size_, terms_, map_.data(), degree_.data(), orders_,
                                     tables_.data() + 2 * per_level,
                                     ops_.data() + std::size_t(2) * kOffsets<D> * table_size_);
  NF_CUDA(cudaGetLastError());
}

template <int D, class T>
void M2LOperators<D, T>::apply(int l, const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list,
                               const T* M, T* L) {
  if (level.boxes == 0 || list.links == 0) return;
  if (threaded_) {
    reserve(l, level, list);
    const std::size_t at = std::size_t(l);
    m2l_thread<D, T>(p_, staged_, orders_, level, parents, list, derivatives_.at(at), M, L, thread_scratch_[at].data(),
                     thread_classes_[at].data());
    return;
  }
  if (!grouped() && !tensor()) {
    m2l<D, T>(level, list, p_, orders_, derivatives_.at(std::size_t(l)), M, L);
    return;
  }
  // An adaptive level's groups are formed over its split parents; NEARFIELD_M2L_GROUPS=all forms
  // them over every kept parent, as before (comparisons).
  DeviceLevel over = parents;
  if (groups_setting() == "all") over.split = nullptr, over.split_count = nullptr;
  // A level with fewer blocks than two per SM splits its offsets among up to 8 blocks per group
  // (NEARFIELD_M2L_SPLITS forces a count): level 4 of a 3D tree has 128 blocks of TB = 32.
  const std::uint32_t want = 2 * std::uint32_t(gpu::sm_count());
  auto splits_for = [&](int tb) {
    const std::uint32_t blocks = (1u << D) * gpu::div_up(parents.boxes, std::uint32_t(tb));
    return std::uint32_t(forced_splits(int(std::clamp(gpu::div_up(want, blocks), 1u, 8u))));
  };
  if constexpr (std::is_same_v<T, float>) {
    if (tensor()) {
      tensor_.apply(l, level, over, list, M, L, splits_for(32));
      return;
    }
  }
  const T* ops = ops_.data() + std::size_t(l) * kOffsets<D> * table_size_;
  const int probe = m2l_probe();
  // Packed moments (float): the level's words written first, on the launches' stream.
  const T* moments = M;
  if constexpr (std::is_same_v<T, float>) {
    if (words_ < terms_) {
      reserve(l, level, list);
      T* packed = packed_[std::size_t(l)].data();
      const std::size_t count = std::size_t(level.boxes) * std::size_t(words_);
      const unsigned blocks = unsigned(std::min<std::size_t>((count + 255) / 256, 32 * std::size_t(gpu::sm_count())));
      pack_moments_kernel<<<blocks, 256, 0, gpu::launch_stream()>>>(count, terms_, packed_from_, words_, M,
                                                                    reinterpret_cast<std::uint32_t*>(packed));
      NF_CUDA(cudaGetLastError());
      moments = packed;
    }
  }
  for (const Slice& sl : slices_) {
    const int tb = 32 * sl.targets_per_lane;
    const std::uint32_t blocks = (1u << D) * gpu::div_up(parents.boxes, std::uint32_t(tb));
    const std::uint32_t splits = splits_for(tb);
    dispatch(sl.targets_per_lane, sl.stages, sl.rows, words_ < terms_, [&](auto kernel) {
      // The limit is the kernel instance's, for the whole process: another order's operators (a
      // Python Tree keeps one prepared method per order) may have set it lower since this reset.
      NF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sl.shared_bytes)));
      kernel<<<dim3(blocks, splits), 32 * sl.warps, sl.shared_bytes, gpu::launch_stream()>>>(
          level, over, list, terms_, words_, packed_from_, table_size_, sl.begin, sl.size, sl.first_quad, sl.plan.data(),
          ops, orders_, chunk_order_.data(), moments, L, probe);
    });
    NF_CUDA(cudaGetLastError());
  }
}

template <int D, class T>
void M2LOperators<D, T>::reserve(int l, const DeviceLevel& level, const DeviceList& list) {
  if (level.boxes == 0 || list.links == 0) return;
  // A scratch of each level's own (the levels may run at once: apply_levels), sized by the
  // level's own boxes (an adaptive level's kept ones), grown, never shrunk.
  const std::size_t at = std::size_t(l);
  if (grouped() && words_ < terms_) {  // the group kernel's packed moments
    if (packed_.size() <= at) packed_.resize(at + 1);
    const std::size_t need = std::size_t(level.boxes) * std::size_t(words_);
    if (packed_[at].size() < need) packed_[at] = gpu::DeviceBuffer<T>(need);
    return;
  }
  if (!threaded_) return;
  if (thread_scratch_.size() <= at) thread_scratch_.resize(at + 1), thread_classes_.resize(at + 1);
  const std::size_t need = m2l_thread_scratch<D, T>(p_, level.boxes);
  if (thread_scratch_[at].size() < need) thread_scratch_[at] = gpu::DeviceBuffer<T>(need);
  const std::size_t words = m2l_thread_class_words<D, T>(p_, orders_, level.boxes, list.links);
  if (thread_classes_[at].size() < words) thread_classes_[at] = gpu::DeviceBuffer<std::uint32_t>(words);
}

template <int D, class T>
typename M2LOperators<D, T>::LevelOrder M2LOperators<D, T>::level_order() {
  const std::string mode = levels_setting();
  return mode == "serial" ? LevelOrder::serial : mode == "coarse" ? LevelOrder::coarse_first : LevelOrder::fine_first;
}

template class M2LOperators<2, float>;
template class M2LOperators<2, double>;
template class M2LOperators<3, float>;
template class M2LOperators<3, double>;

}  // namespace nf::farfield
