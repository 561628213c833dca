// The far-field methods' comparison variables on the GPU (gpu suite): a wrong value of any of them
// (NEARFIELD_ADAPTIVE_NEAR, the passes', NEARFIELD_M2L_ROWS, NEARFIELD_M2L, NEARFIELD_M2L_STAGED,
// NEARFIELD_M2L_PROBE, _SPLITS, _STAGES, _GROUPS, _PLAN) is refused before any work, and a method
// that refused plans again once the value is put right.
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "farfield/multi_index.h"
#include "fmm_pair.h"
#include "helpers.h"
#include "methods/registry.h"

using namespace nf;

namespace {
// The relative L2 gap between a prepared method's accelerations and cpu-fmm's (near field cpu-omp)
// on the same setup.
template <class Method>
double gap_to_cpu_fmm(Method& m, const MethodSetup& s, const Particles& p) {
  m.evaluate();
  MethodSetup cs = s;
  cs.near = "cpu-omp";
  auto cpu = make_method(find_kernel("cpu-fmm"), cs, p);
  cpu->prepare(p);
  cpu->evaluate();
  return test::relative_l2(m.accelerations(), cpu->accelerations());
}
}  // namespace

TEST_CASE("fmm-adaptive refuses an unknown NEARFIELD_ADAPTIVE_NEAR" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  test::EnvScope env("NEARFIELD_ADAPTIVE_NEAR", "both");
  const Particles p = test::make("plummer", 3, 500, 75);
  MethodSetup s;
  s.level = 4;
  s.domain = default_domain(p);
  s.order = 4;
  s.leaf_size = 16;
  CHECK_THROWS_AS(make_method(find_kernel("fmm-adaptive"), s, p), UsageError);
}

TEST_CASE("fmm refuses a wrong value of the passes' comparison variables before any work" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const Particles p = test::make("plummer", 3, 500, 77);
  MethodSetup s;
  s.level = 4;
  s.domain = default_domain(p);
  s.order = 4;
  for (const auto& [name, value] : std::vector<std::pair<const char*, const char*>>{
           {"NEARFIELD_SHIFTS", "thraed"}, {"NEARFIELD_P2M_SMALL", "no"}, {"NEARFIELD_P2M_SMALL_MAX", "shift-thread"},
           {"NEARFIELD_P2M_SMALL_MAX", "0"}, {"NEARFIELD_P2M_SMALL_MAX", "-1"}}) {
    CAPTURE(name);
    CAPTURE(value);
    test::EnvScope env(name, value);
    for (const char* kernel : {"fmm", "fmm-adaptive"}) {
      CAPTURE(kernel);
      MethodSetup ks = s;
      if (std::string(kernel) == "fmm-adaptive") ks.leaf_size = 16;
      auto m = make_method(find_kernel(kernel), ks, p);
      CHECK_THROWS_AS(m->prepare(p), UsageError);
    }
  }
}

TEST_CASE("fmm and fmm-adaptive refuse a wrong NEARFIELD_M2L_PROBE before any work" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const Particles p = test::make("uniform", 3, 500, 79);
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(p);
  s.order = 10;  // 3D: the sibling-group kernel's order
  test::EnvScope probe("NEARFIELD_M2L_PROBE", "copy");
  for (const char* kernel : {"fmm", "fmm-adaptive"}) {
    CAPTURE(std::string(kernel));
    MethodSetup ks = s;
    if (std::string(kernel) == "fmm-adaptive") ks.leaf_size = 16;
    CHECK_THROWS_WITH_AS(make_method(find_kernel(kernel), ks, p)->prepare(p), doctest::Contains("NEARFIELD_M2L_PROBE=copy"),
                         UsageError);
  }
}

TEST_CASE("fmm refuses a wrong count or choice of M2L's comparison variables before any work" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const Particles p = test::make("uniform", 3, 500, 80);
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(p);
  s.order = 10;  // 3D: the sibling-group kernel's order
  // atoi had read "two" as no value (the default) and "2x" as 2; the choices had ignored a typo.
  for (const auto& [name, value] : std::vector<std::pair<const char*, const char*>>{
           {"NEARFIELD_M2L_SPLITS", "two"}, {"NEARFIELD_M2L_SPLITS", "2x"}, {"NEARFIELD_M2L_SPLITS", "0"},
           {"NEARFIELD_M2L_SPLITS", "65"}, {"NEARFIELD_M2L_STAGES", "5"}, {"NEARFIELD_M2L_STAGES", "-1"},
           {"NEARFIELD_M2L_GROUPS", "al"}, {"NEARFIELD_M2L_PLAN", "balance"}}) {
    CAPTURE(name);
    CAPTURE(value);
    test::EnvScope env(name, value);
    const std::string refusal = std::string(name) + "=" + value + ": expected";
    CHECK_THROWS_WITH_AS(make_method(find_kernel("fmm"), s, p)->prepare(p), doctest::Contains(refusal.c_str()), UsageError);
  }
  // The values they take still run, and still match cpu-fmm.
  test::EnvScope splits("NEARFIELD_M2L_SPLITS", "3"), stages("NEARFIELD_M2L_STAGES", "1"),
      groups("NEARFIELD_M2L_GROUPS", "all"), plan("NEARFIELD_M2L_PLAN", "contiguous");
  auto m = make_method(find_kernel("fmm"), s, p);
  m->prepare(p);
  CHECK(gap_to_cpu_fmm(*m, s, p) <= 2e-6);
}

TEST_CASE("fmm refuses a wrong NEARFIELD_M2L_ROWS where the sibling-group kernel runs" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const Particles p = test::make("uniform", 3, 500, 78);
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(p);
  s.order = 10;  // 3D: the sibling-group kernel's order
  test::EnvScope rows("NEARFIELD_M2L_ROWS", "6");
  CHECK_THROWS_AS(make_method(find_kernel("fmm"), s, p)->prepare(p), UsageError);
  rows.set("8");  // two quads a unit: float only
  make_method(find_kernel("fmm"), s, p)->prepare(p);
  s.precision = Precision::f64;
  CHECK_THROWS_AS(make_method(find_kernel("fmm"), s, p)->prepare(p), UsageError);
  rows.set("4");
  make_method(find_kernel("fmm"), s, p)->prepare(p);
}

TEST_CASE("fmm refuses an unknown NEARFIELD_M2L or NEARFIELD_M2L_STAGED" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const Particles p = test::make("uniform", 3, 500, 76);
  const Particles q = test::make("plummer", 3, 500, 77);
  for (const char* kernel : {"fmm", "fmm-adaptive"}) {
    CAPTURE(kernel);
    MethodSetup s;
    s.level = 4;
    s.domain = default_domain(q);
    s.order = 4;
    if (std::string(kernel) == "fmm-adaptive") s.leaf_size = 16;
    test::EnvScope staged("NEARFIELD_M2L_STAGED", "no");
    CHECK_THROWS_AS(make_method(find_kernel(kernel), s, q)->prepare(q), UsageError);
    staged.set("off");  // the values it takes
    make_method(find_kernel(kernel), s, q)->prepare(q);
    staged.set("on");
    make_method(find_kernel(kernel), s, q)->prepare(q);
  }
  test::EnvScope env("NEARFIELD_M2L", "thraed");  // a typo had run the group kernel without a word
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(p);
  s.order = 4;
  auto m = make_method(find_kernel("fmm"), s, p);
  CHECK_THROWS_AS(m->prepare(p), UsageError);
  // The refusal leaves nothing behind: with the variable put right, the same method plans again
  // and matches cpu-fmm (it had kept the refused call's order and skipped the plan).
  env.set(nullptr);
  m->prepare(p);
  CHECK(gap_to_cpu_fmm(*m, s, p) <= 2e-6);
  // The tensor-core kernel runs float only, and only orders it fits (3D p = 17 has more row tiles
  // than its warps' units, 72 against 64; at p = 20 one operand buffer passes the shared memory): a
  // forced one that cannot run says so.
  env.set("tensor");
  MethodSetup d = s;
  d.precision = Precision::f64;
  CHECK_THROWS_AS(make_method(find_kernel("fmm"), d, p)->prepare(p), UsageError);
  for (int order : {17, farfield::kMaxOrder}) {
    CAPTURE(order);
    MethodSetup high = s;
    high.order = order;
    CHECK_THROWS_AS(make_method(find_kernel("fmm"), high, p)->prepare(p), UsageError);
  }
}
