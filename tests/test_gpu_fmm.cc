// The far field on the GPU (gpu suite): the levels and M2L lists built on the GPU equal the CPU's
// (tree/levels.h, farfield/lists.h) box for box, and `fmm` equals `cpu-fmm` to rounding at several
// orders, 2D and 3D, float and double (both against float64 all pairs: test_kernels_full.cc), with
// the same operation counts per stage. The refusals of the comparison variables are in
// test_gpu_fmm_refusals.cc.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "farfield/derivatives.h"
#include "farfield/lists.h"
#include "farfield/lists_gpu.h"
#include "farfield/m2l_group_plan.h"
#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "fmm_pair.h"
#include "helpers.h"
#include "methods/registry.h"
#include "tree/levels.h"
#include "tree/levels_gpu.h"
#include "tree/tree_gpu.h"

using namespace nf;

namespace {

template <class V>
std::vector<V> download(const V* p, std::size_t n) {
  std::vector<V> out(n);
  if (n) gpu::copy_to_host(out.data(), p, n * sizeof(V));
  return out;
}

struct LevelCase {
  std::string what;
  Particles p;
  int level;
};

std::vector<LevelCase> level_cases() {
  return {{"uniform 2D level 5", test::make("uniform", 2, 3000, 51), 5},
          {"clusters 3D level 4 (empty boxes)", test::make("clusters", 3, 4000, 52), 4},
          {"plummer 2D level 9 (deep, sparse)", test::make("plummer", 2, 800, 53), 9},
          {"plummer 3D level 6", test::make("plummer", 3, 5000, 54), 6},
          {"one particle, 3D level 3", test::from_points(3, {{0.2, 0.7, 0.4}}), 3},
          {"level 2", test::make("uniform", 3, 300, 55), 2}};
}

TEST_CASE("GPU tree with levels and M2L lists equal the CPU's" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (const LevelCase& c : level_cases()) {
    CAPTURE(c.what);
    const Domain d = default_domain(c.p);
    const Tree tree = build_tree(c.p, c.level, d, false);
    const TreeLevels cpu = build_levels(tree);
    const farfield::InteractionLists cpu_lists = farfield::build_interaction_lists(cpu);
    const DeviceParticles dp = upload_particles(c.p);
    GpuTreeBuilder builder(c.p.dim, c.level, c.p.size(), false);
    DeviceLevels gpu;
    farfield::DeviceLists gpu_lists;
    for (int rebuild = 0; rebuild < 2; ++rebuild) {  // the second build reuses every buffer
      builder.build(dp, &d);
      gpu.build(builder.tree());
      gpu_lists.build(gpu);
    }
    REQUIRE(gpu.level.size() == cpu.level.size());
    std::uint64_t links = 0;
    for (std::size_t l = 0; l < cpu.level.size(); ++l) {
      CAPTURE(l);
      const TreeLevel& want = cpu.level[l];
      const DeviceLevel& got = gpu.level[l];
      REQUIRE(got.boxes == want.boxes());
      CHECK(download(got.key, got.boxes) == want.key);
      CHECK(download(got.first, got.boxes + 1) == want.first);
      if (l > 0) CHECK(download(got.parent, got.boxes) == want.parent);
      if (l + 1 < cpu.level.size()) CHECK(download(got.child, got.boxes + 1) == want.child);
      if (l < 2) continue;
      const farfield::DeviceList& list = gpu_lists.level[l];
      const std::vector<std::uint32_t> offset = download(list.offset, got.boxes + 1);
      CHECK(offset == cpu_lists[l].offset);
      std::vector<std::uint32_t> ids = download(list.ids, list.links);
      for (std::uint32_t b = 0; b < got.boxes; ++b)  // the CPU's are ascending; the GPU's by parent neighbor
        std::sort(ids.begin() + offset[b], ids.begin() + offset[b + 1]);
      CHECK(ids == cpu_lists[l].ids);
      links += cpu_lists[l].ids.size();
    }
    CHECK(gpu_lists.links() == links);
  }
}

// The largest difference of `got` from `want` over one offset's table, each degree against its
// largest entry (the terms of one degree share a scale).
template <int D, class T>
double degree_error(const T* got, const std::vector<long double>& want, int p) {
  double worst = 0;
  for (int d = 0; d <= p; ++d) {
    long double scale = 0;
    for (int i = farfield::degree_start<D>(d); i < farfield::terms<D>(d); ++i) scale = std::max(scale, std::fabs(want[i]));
    for (int i = farfield::degree_start<D>(d); i < farfield::terms<D>(d); ++i)
      if (scale > 0) worst = std::max(worst, double(std::fabs((long double)got[i] - want[i]) / scale));
  }
  return worst;
}

// The GPU's tables of three levels (one launch) against the CPU recursion in long double: at most
// a few times the error of the CPU recursion in T itself (the recursion cancels at high orders:
// in float its error reaches 3e-4 of a degree's largest entry at p = 12 and 0.35 at p = 20), and
// the adjacent offsets zero.
template <int D, class T>
void check_derivative_tables(int p) {
  const std::vector<T> eps2 = {T(0), T(0.3), T(2e-5)};
  const int terms = farfield::terms<D>(p);
  const std::size_t per_level = std::size_t(farfield::kOffsets<D>) * terms;
  gpu::DeviceBuffer<T> tables(eps2.size() * per_level);
  farfield::derivative_tables<D, T>(p, eps2, tables.data());
  const std::vector<T> got = download(tables.data(), tables.size());
  double gpu_error = 0, cpu_error = 0;
  bool adjacent_zero = true;
  for (std::size_t l = 0; l < eps2.size(); ++l)
    for (int o = 0; o < farfield::kOffsets<D>; ++o) {
      long double r[D];
      T rt[D];
      bool adjacent = true;
      for (int a = 0, v = o; a < D; ++a, v /= 7) r[a] = v % 7 - 3, rt[a] = T(r[a]), adjacent = adjacent && std::fabs(r[a]) <= 1;
      const T* g = got.data() + l * per_level + std::size_t(o) * terms;
      if (adjacent) {
        for (int i = 0; i < terms; ++i) adjacent_zero = adjacent_zero && g[i] == T(0);
        continue;
      }
      std::vector<long double> want(static_cast<std::size_t>(terms));
      farfield::derivatives<D, long double>(r, (long double)eps2[l], p, want.data());
      std::vector<T> cpu(static_cast<std::size_t>(terms));
      farfield::derivatives<D, T>(rt, eps2[l], p, cpu.data());
      gpu_error = std::max(gpu_error, degree_error<D, T>(g, want, p));
      cpu_error = std::max(cpu_error, degree_error<D, T>(cpu.data(), want, p));
    }
  CAPTURE(gpu_error);
  CAPTURE(cpu_error);
  CHECK(adjacent_zero);
  CHECK(gpu_error <= 4 * cpu_error + 64 * double(std::numeric_limits<T>::epsilon()));
}

TEST_CASE("GPU derivative tables of several levels equal the CPU's recursion" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (int p : {1, 2, 7, 12, 20}) {
    CAPTURE(p);
    check_derivative_tables<2, double>(p);
    check_derivative_tables<3, double>(p);
    check_derivative_tables<2, float>(p);
    check_derivative_tables<3, float>(p);
  }
}

TEST_CASE("GPU fmm equals cpu-fmm to rounding" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  struct Case {
    Particles p;
    int level;
  };
  const std::vector<Case> cases = {{test::make("plummer", 3, 6000, 61), 4},
                                   {test::make("clusters", 2, 5000, 62), 6},
                                   {test::make("uniform", 3, 4000, 63), 3}};
  // M2L's kernels: the default (a thread per target up to 3D float p = 8: farfield/m2l_thread_gpu.h;
  // the tensor cores at 3D float p = 14: farfield/m2l_tensor_gpu.h; at 3D float p = 12 the group
  // kernel with its high-degree moments in bfloat16, m2l_plan::packs_moments, still within the
  // bound, also forced with one and two quads a unit and in slices: test_gpu_fmm_moments.cc measures
  // how far, and covers p = 11's shape, two targets a lane, against float moments)
  // and the sibling-group kernel at every order it runs, in slices of its row quads where the
  // operator table does not fit beside the moments (3D double p = 12, 3D float p = 14, forced), and
  // farfield::m2l where the moments leave no room for a slice (3D double p = 14 and 20, float p = 20).
  // NEARFIELD_M2L=thread at 3D p = 6..8 also runs the wide variant (double p = 6, float p = 7, 8);
  // at float p = 8 with the orders per offset (a walk of each list per order) and, "thread-full",
  // with order p at every offset in both methods (NEARFIELD_M2L_ORDERS=full).
  // "tensor": M2L's sibling groups on the tensor cores (NEARFIELD_M2L=tensor, float only).
  // "group-rows4" / "group-rows8": the sibling-group kernel with one / two row quads a unit at every
  // shape where its whole table fits (NEARFIELD_M2L_ROWS=4 / 8; by default two in float in 2D, p = 14
  // here, and in 3D from p = 12 with one target a lane, where one quad takes pipeline shape 3; float
  // only: double always takes one), at the group orders above and at 3D p = 12 and 2D p = 14.
  // "p2m-threads": P2M takes every box a thread at the orders it runs at (NEARFIELD_P2M_SMALL_MAX;
  // by default only boxes of at most 96 particles, on levels of at most 96 a box on average).
  // "shifts-thread": M2M and L2L a thread per child wherever the order allows (NEARFIELD_SHIFTS=thread;
  // by default only on levels of more children than the GPU's resident threads; these small levels
  // take the line kernel in 3D from p = 10 (8 where sparse) and the block per parent from tables
  // otherwise).
  // "shifts-block": the block per parent from tables everywhere (NEARFIELD_SHIFTS=block) at p = 3, 8,
  // 14 and 20; "shifts-line": the line kernel everywhere (NEARFIELD_SHIFTS=line), 2D too, at p = 3,
  // 6, 12 and (3D, the small case) 20.
  // "thread-unstaged" / "thread-staged": the thread kernel at the orders where it can stage (3D float
  // p <= 6, 3D double <= 4, 2D <= 8; p = 4 and 5 only there), each lane reading its sources' moments
  // itself / the warp staging them in shared memory on every level (NEARFIELD_M2L_STAGED=off / on;
  // by default only on levels of at least 3/4 of the children).
  test::EnvScope m2l("NEARFIELD_M2L"), full("NEARFIELD_M2L_ORDERS"), p2m_max("NEARFIELD_P2M_SMALL_MAX"),
      shifts("NEARFIELD_SHIFTS"), staged("NEARFIELD_M2L_STAGED"), rows("NEARFIELD_M2L_ROWS");
  for (const char* variant : {static_cast<const char*>(nullptr), "group", "group-rows4", "group-rows8", "thread", "thread-full", "thread-unstaged",
                              "thread-staged", "p2m-threads", "shifts-thread", "shifts-block", "shifts-line", "tensor"})
  for (const Case& c : cases)
    for (Precision prec : {Precision::f32, Precision::f64})
      for (int order : {3, 4, 5, 6, 7, 8, 11, 12, 14, 16, farfield::kMaxOrder}) {
        if (order == farfield::kMaxOrder && c.level != 3) continue;  // the highest order on the small case only
        // p = 16: the tensor cores' one-buffer ring (3D float by default), on the small case only
        if (order == 16 && (c.level != 3 || prec != Precision::f32 || (variant && std::string(variant) != "tensor")))
          continue;
        const bool every = variant && std::string(variant) == "thread-full";
        const bool wide = variant && (std::string(variant) == "thread" || every);
        const bool p2m_threads = variant && std::string(variant) == "p2m-threads";
        const bool shifts_thread = variant && std::string(variant) == "shifts-thread";
        const bool shifts_block = variant && std::string(variant) == "shifts-block";
        if (shifts_block && order != 3 && order != 8 && order != 14 && order != farfield::kMaxOrder) continue;
        const bool shifts_line = variant && std::string(variant) == "shifts-line";
        if (shifts_line && order != 3 && order != 6 && order != 12 && order != farfield::kMaxOrder) continue;
        const bool unstaged = variant && std::string(variant) == "thread-unstaged";
        const bool forced_staged = variant && std::string(variant) == "thread-staged";
        const bool staging = unstaged || forced_staged;
        const int staged_most = c.p.dim == 3 ? (prec == Precision::f32 ? 6 : 4) : 8;
        if (staging && order > staged_most) continue;
        if (order == 5 && !staging) continue;
        // The thread kernels' variants run up to their highest orders (3D float 6, double 4; 2D float
        // 11, double 7); p = 4 and 11 only there.
        const bool threads = p2m_threads || shifts_thread;
        if (threads && order > (c.p.dim == 2 ? 11 : 6)) continue;
        if ((order == 4 || order == 11) && !threads && !staging) continue;
        if (order == 7 && !wide && !threads && !staging) continue;  // p = 7 (float: the wide variant's default) with the variant below
        if (wide && prec == Precision::f64 && order > 6) continue;  // double's wide variant ends at p = 6
        if (wide && (c.p.dim != 3 || order < 6 || order > 8)) continue;
        if (every && (order != 8 || prec != Precision::f32)) continue;
        // "tensor": the sibling groups on the tensor cores (float only; 3D up to p = 16 here, 3D
        // p = 20 does not fit), at every order of the list, low ones too.
        const bool tensor = variant && std::string(variant) == "tensor";
        if (tensor && (prec != Precision::f32 || (c.p.dim == 3 && order > 16))) continue;
        const bool rows4 = variant && std::string(variant) == "group-rows4";
        const bool rows8 = variant && std::string(variant) == "group-rows8";
        if ((rows4 || rows8) && prec != Precision::f32) continue;  // double runs one quad a unit anyway
        const bool m2l_variant = variant && !p2m_threads && !shifts_thread && !shifts_block && !shifts_line && !staging;
        // The group kernel is the default above those orders, but not where the tensor cores are
        // (float 3D p = 13..16: there "group" runs it in slices, p = 14).
        const bool group_forced = variant && (std::string(variant) == "group" || rows4 || rows8) && prec == Precision::f32 &&
                                  farfield::m2l_plan::tensor_by_default(c.p.dim, order);
        const bool rows_order = (rows4 || rows8) && order == (c.p.dim == 2 ? 14 : 12);
        if (m2l_variant && !wide && !tensor && !group_forced && !rows_order && order > (c.p.dim == 2 ? 12 : 8)) continue;
        m2l.set(wide || staging ? "thread" : rows4 || rows8 ? "group" : m2l_variant ? variant : nullptr);
        rows.set(rows4 ? "4" : rows8 ? "8" : nullptr);
        staged.set(unstaged ? "off" : forced_staged ? "on" : nullptr);
        p2m_max.set(p2m_threads ? "1000000" : nullptr);
        shifts.set(shifts_thread ? "thread" : shifts_block ? "block" : shifts_line ? "line" : nullptr);
        full.set(every ? "full" : nullptr);
        CAPTURE(variant ? variant : "default");
        CAPTURE(c.p.dim);
        CAPTURE(c.level);
        CAPTURE(to_string(prec));
        CAPTURE(order);
        MethodSetup s;
        s.level = c.level;
        s.domain = default_domain(c.p);
        s.softening = 1e-3;
        s.precision = prec;
        s.order = order;
        // The CPU twin sums its near field with cpu-omp's scalar arithmetic (fmm_pair.h).
        const test::FmmPair m = test::evaluate_fmm_and_cpu(s, c.p);
        const auto& cpu = m.cpu;
        const auto& gpu = m.gpu;
        const std::vector<double> a = gpu->accelerations(), b = cpu->accelerations();
        REQUIRE(a.size() == b.size());
        CHECK(test::relative_l2(a, b) <= (prec == Precision::f32 ? 2e-6 : 1e-13));
        // Its counts per stage are cpu-fmm's (the same tree), the translations the CPU lists' entries.
        const TreeLevels levels = build_levels(build_tree(c.p, c.level, *s.domain, false));
        std::uint64_t links = 0;
        for (const NeighborLists& l : farfield::build_interaction_lists(levels)) links += l.ids.size();
        const std::vector<Count> counts = gpu->counts(), expected = cpu->counts();
        REQUIRE(counts.size() == expected.size());
        for (std::size_t i = 0; i < counts.size(); ++i) {
          CAPTURE(counts[i].name);
          CHECK(counts[i].name == expected[i].name);
          CHECK(counts[i].value == expected[i].value);
          if (counts[i].name == "m2l_translations") CHECK(counts[i].value == links);
        }
        const StageTimes t = gpu->times();
        CHECK(t.evaluate_ms > 0);
        CHECK(t.get("m2l") > 0);
        CHECK(t.get("near") > 0);
      }
}

// 3D from p = 10 shifts by lines, so its M2M and L2L tables are built only at the first call that
// runs the table kernel: here NEARFIELD_SHIFTS=block set after the method was prepared and
// evaluated once without them.
TEST_CASE("GPU fmm builds its shift tables at the first call that needs them" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  test::EnvScope shifts("NEARFIELD_SHIFTS");
  shifts.set(nullptr);
  const Particles p = test::make("plummer", 3, 3000, 74);
  for (Precision prec : {Precision::f32, Precision::f64})
    for (int order : {10, 12}) {
      CAPTURE(to_string(prec));
      CAPTURE(order);
      MethodSetup s;
      s.level = 3;
      s.domain = default_domain(p);
      s.softening = 1e-3;
      s.precision = prec;
      s.order = order;
      const test::FmmPair m = test::evaluate_fmm_and_cpu(s, p);  // lines on every level
      const double bound = prec == Precision::f32 ? 2e-6 : 1e-13;
      const std::vector<double> b = m.cpu->accelerations();
      CHECK(test::relative_l2(m.gpu->accelerations(), b) <= bound);
      shifts.set("block");
      m.gpu->poison_output();
      m.gpu->evaluate();  // the tables of this order, built now
      CHECK(test::relative_l2(m.gpu->accelerations(), b) <= bound);
      shifts.set(nullptr);
    }
}

}  // namespace

TEST_CASE("GPU fmm-adaptive equals cpu-fmm-adaptive to rounding, with the same counts" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  struct Case {
    std::string what;
    Particles p;
    int level;
    std::uint32_t leaf_size;
  };
  std::vector<std::vector<double>> pile(300, {0.25, 0.5, 0.5});  // one leaf at level K of 300 coincident points
  for (int i = 0; i < 500; ++i) pile.push_back({0.001 * i, 0.9 - 0.0015 * i, 0.3 + 0.001 * (i % 13)});
  // 4500 coincident points: one leaf of 36 target chunks whose sources take five segments of
  // 1024 (atomics).
  std::vector<std::vector<double>> big_pile(4500, {0.7, 0.2});
  for (int i = 0; i < 700; ++i) big_pile.push_back({0.0013 * i, 0.05 + 0.0012 * i});
  const std::vector<Case> cases = {{"plummer 3D", test::make("plummer", 3, 8000, 71), 7, 32},
                                   {"clusters 2D", test::make("clusters", 2, 6000, 72), 10, 16},
                                   {"uniform 3D, level 2", test::make("uniform", 3, 3000, 73), 2, 64},
                                   {"coincident pile, 3D", test::from_points(3, pile), 6, 8},
                                   {"one particle", test::from_points(3, {{0.2, 0.4, 0.6}}), 3, 1},
                                   // Leaves of up to 200 targets (two chunks) beside dense split
                                   // boxes: many leaves a level see more than 1024 sources.
                                   {"plummer 3D, big leaves", test::make("plummer", 3, 20000, 74), 6, 200},
                                   {"coincident pile of 4500, 2D", test::from_points(2, big_pile), 8, 16}};
  // The near field's two forms (farfield/adaptive_gpu.h): the leaves' mutual pairs by n3-rotate's
  // kernel and the rest one-sided (the default), and every pair one-sided; with the latter, M2M and
  // L2L a thread per child wherever the order allows (NEARFIELD_SHIFTS=thread: by default these
  // levels are too small for it) and M2L's moments staged on every level at the orders that stage
  // (p = 3, and 8 in 2D; NEARFIELD_M2L_STAGED=on: by default few adaptive levels fill 3/4).
  // "tensor": M2L's sibling groups on the tensor cores over the split parents (float, p = 8 and 12).
  for (const char* variant : {"mutual", "one-sided", "tensor"})
  for (const Case& c : cases)
    for (Precision prec : {Precision::f32, Precision::f64})
      for (int order : {3, 8, 12}) {
        const bool tensor = std::string(variant) == "tensor";
        if (tensor && (prec != Precision::f32 || order == 3)) continue;
        const char* near = tensor ? "mutual" : variant;
        CAPTURE(near);
        CAPTURE(tensor);
        CAPTURE(c.what);
        CAPTURE(to_string(prec));
        CAPTURE(order);
        test::EnvScope m2l("NEARFIELD_M2L", tensor ? "tensor" : nullptr);
        test::EnvScope env("NEARFIELD_ADAPTIVE_NEAR", near);
        test::EnvScope shifts("NEARFIELD_SHIFTS", std::string(near) == "one-sided" ? "thread" : nullptr);
        test::EnvScope staged("NEARFIELD_M2L_STAGED", std::string(near) == "one-sided" ? "on" : nullptr);
        MethodSetup s;
        s.level = c.level;
        s.domain = default_domain(c.p);
        s.softening = 1e-3;
        s.precision = prec;
        s.order = order;
        s.leaf_size = c.leaf_size;
        auto cpu = make_method(find_kernel("cpu-fmm-adaptive"), s, c.p);
        auto gpu = make_method(find_kernel("fmm-adaptive"), s, c.p);
        CHECK(gpu->near_kernel() == (std::string(near) == "mutual" ? "leaf-n3" : "leaf-direct"));
        cpu->prepare(c.p);
        cpu->evaluate();
        for (int rebuild = 0; rebuild < 2; ++rebuild) {  // the second prepare reuses every buffer
          gpu->prepare(c.p);
          gpu->poison_output();
          gpu->evaluate();
        }
        const std::vector<double> a = gpu->accelerations(), b = cpu->accelerations();
        REQUIRE(a.size() == b.size());
        CHECK(test::relative_l2(a, b) <= (prec == Precision::f32 ? 2e-6 : 1e-13));
        const std::vector<Count> counts = gpu->counts(), expected = cpu->counts();
        REQUIRE(counts.size() == expected.size());
        for (std::size_t i = 0; i < counts.size(); ++i) {
          CAPTURE(counts[i].name);
          CHECK(counts[i].value == expected[i].value);
        }
      }
}
