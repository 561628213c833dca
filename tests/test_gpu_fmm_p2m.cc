// P2M's block kernel on the GPU (farfield/p2m_tiles.cuh; gpu suite) at every order 1..20, 2D and 3D,
// float and double: each order is a kernel of its own (the tiles, the particle groups of a warp and
// the tiles a lane follow from it), and `fmm` with a block per box everywhere equals `cpu-fmm` to
// rounding. The inputs' boxes hold from a few particles to several hundred: a warp's partial chunk,
// several chunks a warp, and both warps of a block.
#include <vector>

#include "farfield/multi_index.h"
#include "fmm_pair.h"
#include "helpers.h"

using namespace nf;

TEST_CASE("GPU fmm's P2M tiles at every order equal cpu-fmm to rounding" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  // A block per box at every order and level (by default the thread per small box takes the small
  // boxes of levels of at most 96 particles a box on average, up to 3D float p = 6).
  test::EnvScope small("NEARFIELD_P2M_SMALL", "off");
  struct Case {
    Particles p;
    int level;
  };
  const std::vector<Case> cases = {{test::make("plummer", 3, 3000, 81), 2}, {test::make("clusters", 2, 3000, 82), 3}};
  for (const Case& c : cases)
    for (Precision prec : {Precision::f32, Precision::f64})
      for (int order = 1; order <= farfield::kMaxOrder; ++order) {
        CAPTURE(c.p.dim);
        CAPTURE(to_string(prec));
        CAPTURE(order);
        MethodSetup s;
        s.level = c.level;
        s.domain = default_domain(c.p);
        s.softening = 1e-3;
        s.precision = prec;
        s.order = order;
        const test::FmmPair m = test::evaluate_fmm_and_cpu(s, c.p);
        const std::vector<double> a = m.gpu->accelerations(), b = m.cpu->accelerations();
        REQUIRE(a.size() == b.size());
        CHECK(test::relative_l2(a, b) <= (prec == Precision::f32 ? 2e-6 : 1e-13));
      }
}
