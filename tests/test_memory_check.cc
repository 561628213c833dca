// Memory checked before work (methods/memory_estimate.h, docs/design.md §6): the estimate follows
// N, the dimension, the precision, the level and the kernel; a run that cannot fit is refused at
// once with the bytes needed and available, and nothing is written; runs that fit go ahead.
#include <algorithm>

#include "core/errors.h"
#include "core/host_memory.h"
#include "farfield/m2l_group_plan.h"
#include "farfield/order.h"
#include "methods/auto_level.h"
#include "methods/full_level_rule.h"
#include "methods/memory_estimate.h"
#include "tree/tree.h"
#include "helpers.h"

using namespace nf;
using nf::test::run_cli;
using nf::test::TempDir;

namespace {

MemoryNeed need_of(const std::string& kernel, int dim, std::uint64_t n, int level, Precision precision, int threads = 1) {
  MethodSetup s;
  s.level = level;
  s.precision = precision;
  MemoryNeed need;
  add_method_memory(need, find_kernel(kernel), s, dim, n, threads);
  return need;
}

// Host bytes of kernel on n particles (dim, level, precision) plus the particles themselves.
double run_bytes(const std::string& kernel, int dim, std::uint64_t n, int level) {
  return need_of(kernel, dim, n, level, Precision::f32).host_bytes() + particle_bytes(dim, n, false, false);
}

}  // namespace

TEST_CASE("the estimate follows N, precision, level, threads and the kernel's layout") {
  const double small = need_of("cpu-serial", 3, 1000000, 5, Precision::f32).host_bytes();
  const double large = need_of("cpu-serial", 3, 2000000, 5, Precision::f32).host_bytes();
  CHECK(large > 1.8 * small);  // the dense box arrays of level 5 stay
  CHECK(need_of("cpu-n3", 3, 1000000, 5, Precision::f64).host_bytes() >
        need_of("cpu-n3", 3, 1000000, 5, Precision::f32).host_bytes());
  // The dense layout grows with the boxes: level 9 in 3D holds 2^27 boxes whatever N.
  CHECK(need_of("cpu-serial", 3, 1000, 9, Precision::f32).host_bytes() > 1e9);
  // Newton-3 OpenMP kernels keep a buffer per thread.
  CHECK(need_of("cpu-omp-n3", 2, 1000000, 5, Precision::f32, 8).host_bytes() >
        need_of("cpu-omp-n3", 2, 1000000, 5, Precision::f32, 1).host_bytes() + 7 * 1000000 * 16.0 * 0.99);
  // CPU kernels need nothing on a GPU; a GPU kernel counts its device arrays there.
  CHECK(need_of("cpu-allpairs", 3, 1000000, 0, Precision::f64).gpu.empty());
  CHECK(need_of("bpb", 3, 1000000, 5, Precision::f32).gpu_bytes() > 1000000 * 32.0);
  // --level auto counts a tree with about one box per particle, an upper bound of the rule's.
  CHECK(need_of("cpu-n3", 3, 1000000, kAutoLevel, Precision::f32).host_bytes() >=
        need_of("cpu-n3", 3, 1000000, 5, Precision::f32).host_bytes());
  // A full method: its near field and the expansions of its order.
  MethodSetup s;
  s.level = 5;
  s.order = 12;
  MemoryNeed fmm;
  add_method_memory(fmm, find_kernel("cpu-fmm"), s, 3, 1000000, 1);
  s.order = 4;
  MemoryNeed fmm4;
  add_method_memory(fmm4, find_kernel("cpu-fmm"), s, 3, 1000000, 1);
  CHECK(fmm.host_bytes() > fmm4.host_bytes());
  // fmm-adaptive counts the expansions of about 8 N / S kept boxes (the method checks the exact
  // figure once its tree is built): 3D Plummer 2^24 at its default order (12) needs a few GiB of
  // them, not the 65 GiB of a box per particle that had refused it on an 80 GB GPU.
  MethodSetup a;
  a.level = kAutoLevel;
  MemoryNeed adaptive, uniform;
  add_method_memory(adaptive, find_kernel("fmm-adaptive"), a, 3, 16777216, 1);
  a.order = 12;
  add_method_memory(uniform, find_kernel("fmm"), a, 3, 16777216, 1);
  double adaptive_expansions = 0;
  for (const auto& part : adaptive.gpu)
    if (part.what.rfind("expansions", 0) == 0) adaptive_expansions = part.bytes;
  const int p = farfield::adaptive_order_for_accuracy_3d(farfield::kDefaultAccuracy);
  const double terms = double((p + 1) * (p + 2) * (p + 3) / 6),
               boxes = 8.0 * 16777216 / auto_leaf_size(3, p, FullMethodCostModel::kGpuFloat) + 1;
  CHECK(adaptive_expansions == doctest::Approx(2.0 * terms * 4.0 * boxes));
  // Its GPU tree has no neighbor lists (gpu_fmm_adaptive.cc builds its part tree only); the CPU
  // method's has them.
  double adaptive_tree = -1;
  for (const auto& part : adaptive.gpu)
    if (part.what.rfind("tree", 0) == 0) adaptive_tree = part.bytes;
  // (--level auto is counted at the shallowest level with a box a particle: 8 here, 7 below.)
  CHECK(adaptive_tree == doctest::Approx(tree_bytes(3, 8, 16777216, false, false)));
  CHECK(adaptive_tree < tree_bytes(3, 8, 16777216, false));
  MemoryNeed cpu_adaptive;
  add_method_memory(cpu_adaptive, find_kernel("cpu-fmm-adaptive"), a, 3, 1000000, 1);
  double cpu_tree = -1;
  for (const auto& part : cpu_adaptive.host)
    if (part.what == "tree") cpu_tree = part.bytes;
  CHECK(cpu_tree == doctest::Approx(tree_bytes(3, 7, 1000000, false)));
  CHECK(adaptive.gpu_bytes() < 20e9);
  CHECK(uniform.gpu_bytes() > 60e9);
  a.leaf_size = 16;  // smaller leaves, more boxes
  MemoryNeed small_leaves;
  add_method_memory(small_leaves, find_kernel("fmm-adaptive"), a, 3, 16777216, 1);
  CHECK(small_leaves.gpu_bytes() > adaptive.gpu_bytes());
  // GPU M2L by sibling groups keeps operator tables (7^3 a level of an order's table entries, levels
  // 0..leaf); on the tensor cores (3D float p = 13..16) signed derivative tables instead (7^3 a level
  // of 2 terms + 1, rounded up to 4); the thread kernel (p = 6) and the older kernel (float p = 20:
  // the moments leave no room; p = 18: more slices than kMostSlices) keep neither.
  for (int order : {6, 10, 13, 14, 16, 17, 18, 20}) {
    CAPTURE(order);
    MethodSetup t;
    t.level = 5, t.order = order;
    MemoryNeed m;
    add_method_memory(m, find_kernel("fmm"), t, 3, 1000000, 1);
    double tables = 0, signed_tables = 0;
    for (const auto& part : m.gpu) {
      if (part.what == "M2L's operator tables") tables = part.bytes;
      if (part.what == "M2L's signed derivative tables") signed_tables = part.bytes;
    }
    const bool tensor = order >= 13 && order <= 16;
    if (order == 6 || order == 18 || order == 20) {  // p = 18: 29 slices, more than kMostSlices
      CHECK(tables == 0);
      CHECK(signed_tables == 0);
    } else if (tensor) {
      CHECK(tables == 0);
      const int t = (order + 1) * (order + 2) * (order + 3) / 6;
      CHECK(farfield::m2l_plan::tensor_table_entries(3, order) == (2 * t + 1 + 3) / 4 * 4);
      CHECK(signed_tables == doctest::Approx(6.0 * 343 * farfield::m2l_plan::tensor_table_entries(3, order) * 4.0));
    } else {
      CHECK(signed_tables == 0);
      CHECK(tables == doctest::Approx(6.0 * 343 * farfield::m2l_plan::group_table_entries(3, order, 4) * 4.0));
      CHECK(farfield::m2l_plan::group_table_entries(3, order, 4) >= (order + 1) * (order + 2) * (order + 3) / 6);
      // float counts the larger of its two layouts (one or two row quads a unit), double the quads'
      CHECK(farfield::m2l_plan::group_table_entries(3, order, 4) ==
            std::max(farfield::m2l_plan::Quads<3>(order).table_size, farfield::m2l_plan::Quads<3>(order, 8, 1, 8).table_size));
      CHECK(farfield::m2l_plan::group_table_entries(3, order, 8) == farfield::m2l_plan::Quads<3>(order).table_size);
    }
  }
  // The tensor-core kernel fits 3D float p = 16 (61 row tiles, one buffer of 162 KB) but not p = 17
  // (72 tiles: more than 16 warps' 64 units).
  CHECK(farfield::m2l_plan::tensor_kernel_fits(3, 16, std::size_t(227) * 1024));
  CHECK(!farfield::m2l_plan::tensor_kernel_fits(3, 17, std::size_t(227) * 1024));
  // Small runs fit.
  CHECK_NOTHROW(check_memory(need_of("cpu-serial", 3, 100000, 4, Precision::f32), "a small run"));
  CHECK(available_host_memory() > 0);
  CHECK(byte_text(1536.0 * 1048576.0) == "1.5 GiB");
}

TEST_CASE("a run that cannot fit is refused before any work, naming the bytes needed and available") {
  TempDir dir;
  // The example: 2e9 3D particles (64 GB of them alone) with cpu-serial. On a machine with
  // room for it (the estimate with its margin below what is available), the case says so instead.
  const std::uint64_t n = 2000000000;
  const double available = static_cast<double>(available_host_memory());
  if (run_bytes("cpu-serial", 3, n, 5) * 1.1 <= available) {
    MESSAGE("skipped: this machine has room for 2e9 3D particles (" << byte_text(available) << " available)");
    return;
  }
  const std::string out = dir.file("x.csv");
  test::CliResult r = run_cli({"forces", "--dist", "uniform", "--n", std::to_string(n), "--dim", "3", "--level", "5",
                               "--kernel", "cpu-serial", "--output", out});
  CHECK(r.code == 2);
  INFO(r.err);
  CHECK(r.err.find("needs about") != std::string::npos);
  CHECK(r.err.find("of host memory") != std::string::npos);
  CHECK(r.err.find("available (") != std::string::npos);
  CHECK(r.err.find("nothing was run") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  // A sweep whose last point cannot fit measures nothing, and writes no results file.
  const std::string results = dir.file("r.csv");
  r = run_cli({"bench", "--dist", "uniform", "--dim", "3", "--n", "1000," + std::to_string(n), "--level", "5",
               "--kernel", "cpu-serial", "--reps", "1", "--output", results});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_FALSE(std::filesystem::exists(results));
  r = run_cli({"validate", "--dist", "uniform", "--dim", "3", "--n", std::to_string(n), "--level", "5", "--kernel",
               "cpu-n3"});
  CHECK(r.code == 2);
  CHECK(r.err.find("needs about") != std::string::npos);
  // simulate and generate too (generate counts only the particles: plummer's velocities double them).
  r = run_cli({"simulate", "--dist", "uniform", "--dim", "3", "--n", std::to_string(n), "--kernel", "cpu-serial",
               "--level", "5", "--dt", "0.1", "--steps", "1", "--output-dir", dir.file("run")});
  CHECK(r.code == 2);
  CHECK(r.err.find("needs about") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("run")));
  if (particle_bytes(3, n, true, false) * 1.1 > available) {
    r = run_cli({"generate", "--dist", "plummer", "--dim", "3", "--n", std::to_string(n), "--output", out});
    CHECK(r.code == 2);
    CHECK(r.err.find("generated particles") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("runs that fit are not refused") {
  TempDir dir;
  const test::CliResult r = run_cli({"forces", "--dist", "plummer", "--dim", "3", "--n", "20000", "--level", "auto",
                                     "--kernel", "cpu-omp-n3", "--output", dir.file("a.csv")});
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("processes of one run on one host share its memory: each checks against its share") {
  std::string alone, shared;
  const double whole = static_cast<double>(available_host_memory(&alone));
  set_host_memory_sharers(4);
  const double quarter = static_cast<double>(available_host_memory(&shared));
  set_host_memory_sharers(1);
  CHECK(quarter == doctest::Approx(whole / 4).epsilon(0.05));  // the figure moves a little between reads
  CHECK(shared == alone + ", shared by the 4 processes of this run on this host");
  std::string again;
  CHECK(static_cast<double>(available_host_memory(&again)) == doctest::Approx(whole).epsilon(0.05));
  CHECK(again == alone);
}
