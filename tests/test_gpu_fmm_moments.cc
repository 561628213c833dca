// M2L's moments of 16 bits (gpu suite; docs/design.md §16 "Moments of 16 bits"): in float, where
// its plan is balanced, the sibling-group kernel may copy each source's terms from
// m2l_plan::packed_from on as bfloat16 (by default at 3D p >= 11, m2l_plan::packs_moments; at every
// such order under NEARFIELD_M2L_MOMENTS=bf16). Against float64 all pairs, the packed run must be
// as accurate as the same run with the moments as they are (NEARFIELD_M2L_MOMENTS=float), and its
// distance from that run must stay a small fraction of the method's own truncation error; the
// distance must also be non-zero; the kernel's own account of its moments (NEARFIELD_M2L_VERBOSE)
// must say what was packed: F floats and the rest bfloat16, or none. The default (packed at 3D float
// p = 12) is held to cpu-fmm by test_gpu_fmm.cc.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "farfield/m2l_group_plan.h"
#include "farfield/multi_index.h"
#include "fmm_pair.h"
#include "force_checks.h"
#include "helpers.h"
#include "methods/registry.h"

using namespace nf;

namespace {

std::vector<double> evaluate(const std::string& kernel, const MethodSetup& s, const Particles& p) {
  auto m = make_method(find_kernel(kernel), s, p);
  m->prepare(p);
  m->poison_output();
  m->evaluate();
  return m->accelerations();
}

// What f writes to the standard error stream (file descriptor 2, where M2L's verbose lines go).
std::string stderr_of(const std::function<void()>& f) {
  std::fflush(stderr);
  char path[] = "/tmp/nearfield-test-stderr-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  const int saved = ::dup(2);
  ::dup2(fd, 2);
  f();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  ::close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

}  // namespace

TEST_CASE("GPU fmm's 16-bit moments: as accurate as float moments, within a fraction of the truncation error" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  struct Case {
    std::string what, kernel;
    Particles p;
    int level;
    std::uint32_t leaf_size;
    std::vector<int> orders;
  };
  // The orders where the group kernel runs in float with a balanced plan and can pack (3D p = 9..12;
  // 2D from p = 14), fmm and fmm-adaptive (whose group kernel runs over the split parents).
  const std::vector<Case> cases = {
      {"plummer 3D", "fmm", test::make("plummer", 3, 6000, 81), 4, 0, {9, 10, 11, 12}},
      {"uniform 3D, level 3", "fmm", test::make("uniform", 3, 5000, 82), 3, 0, {10, 12}},
      {"clusters 2D", "fmm", test::make("clusters", 2, 5000, 83), 6, 0, {14, 16}},
      // In slices of the row quads (whose small tables leave the packed moments less room than
      // the slots' locals take at the end): 3D p = 17, packed by default.
      {"plummer 3D, level 2, slices", "fmm", test::make("plummer", 3, 3000, 86), 2, 0, {17}},
      {"plummer 3D, adaptive", "fmm-adaptive", test::make("plummer", 3, 8000, 84), 7, 32, {10, 12}},
      {"clusters 2D, adaptive", "fmm-adaptive", test::make("clusters", 2, 6000, 85), 10, 16, {14}}};
  for (const Case& c : cases)
    for (int order : c.orders) {
      CAPTURE(c.what);
      CAPTURE(order);
      REQUIRE(farfield::m2l_plan::packed_from(c.p.dim, order) < int(farfield::terms_of(c.p.dim, order)));
      MethodSetup s;
      s.level = c.level;
      s.domain = default_domain(c.p);
      s.softening = 1e-3;
      s.precision = Precision::f32;
      s.order = order;
      if (c.leaf_size) s.leaf_size = c.leaf_size;
      const std::vector<double> reference =
          test::naive_reference(c.p, c.level, *s.domain, s.softening, Precision::f32, true);
      std::vector<double> packed, plain;
      std::string packed_says, plain_says;
      {
        test::EnvScope verbose("NEARFIELD_M2L_VERBOSE", "1");
        test::EnvScope moments("NEARFIELD_M2L_MOMENTS", "bf16");
        packed_says = stderr_of([&] { packed = evaluate(c.kernel, s, c.p); });
        moments.set("float");
        plain_says = stderr_of([&] { plain = evaluate(c.kernel, s, c.p); });
      }
      const int terms = int(farfield::terms_of(c.p.dim, order)), from = farfield::m2l_plan::packed_from(c.p.dim, order);
      CAPTURE(packed_says);
      CAPTURE(plain_says);
      const std::string packs = "moments " + std::to_string(from) + " float + " + std::to_string(terms - from) + " bfloat16";
      const std::string none = "moments " + std::to_string(terms) + " float + 0 bfloat16";
      CHECK(packed_says.find(packs) != std::string::npos);
      CHECK(plain_says.find(none) != std::string::npos);
      REQUIRE(packed.size() == reference.size());
      REQUIRE(plain.size() == reference.size());
      const double error_packed = test::relative_l2(packed, reference), error_plain = test::relative_l2(plain, reference);
      const double distance = test::relative_l2(packed, plain);
      MESSAGE(c.what << " p = " << order << ": error " << error_plain << " (float moments) / " << error_packed
                     << " (16-bit), their distance " << distance);
      CHECK(distance > 0);                                     // something was packed
      CHECK(distance <= 0.15 * error_plain);                   // well below the truncation error
      CHECK(error_packed <= 1.02 * error_plain + 1e-7);        // and no less accurate
    }
}
