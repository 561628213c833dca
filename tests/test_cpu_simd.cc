// cpu-simd, cpu-simd-omp, cpu-simd-omp-n3 on every instruction set this machine runs. The kernel
// tests (test_kernels*.cc) check them with the copy chosen at run time (the best); here each other
// copy (AVX2, SSE4, the portable one, ...) meets the same float64 reference on random, adversarial
// and big-box inputs, and the choice itself is checked. A build without Google Highway has none of
// these kernels and says why when one is asked for.
#include <omp.h>

#include "force_checks.h"
#include "core/errors.h"
#include "nearfield/cpu_simd.h"

using namespace nf;

namespace {

const std::vector<std::string> kSimdKernels = {"cpu-simd", "cpu-simd-omp", "cpu-simd-omp-n3"};

// Restores the run-time choice when a test ends.
struct TargetScope {
  ~TargetScope() { use_simd_target(""); }
};

}  // namespace

TEST_CASE("cpu-simd: the build says whether it has the kernels, and refuses them clearly without Highway") {
  if (!simd_kernels_built()) {
    CHECK(simd_targets_compiled().empty());
    for (const std::string& name : kSimdKernels) {
      CAPTURE(name);
      CHECK_THROWS_WITH_AS(find_kernel(name), doctest::Contains("Google Highway"), UsageError);
    }
    return;
  }
  for (const std::string& name : kSimdKernels) CHECK(find_kernel(name).near_field());
  const std::vector<std::string> compiled = simd_targets_compiled(), supported = simd_targets_supported();
  INFO("compiled: " << compiled.size() << ", this CPU runs: " << supported.size());
  REQUIRE(!supported.empty());
  // The portable copy is always compiled and always runs; a machine runs a subset of the compiled.
  CHECK(compiled.back() == supported.back());
  for (const std::string& t : supported) CHECK(std::find(compiled.begin(), compiled.end(), t) != compiled.end());
  TargetScope restore;
  use_simd_target("");
  if (!std::getenv("NEARFIELD_SIMD")) CHECK(simd_target() == supported.front());
  use_simd_target(supported.back());
  CHECK(simd_target() == supported.back());
  CHECK_THROWS_AS(use_simd_target("no-such-target"), UsageError);
}

TEST_CASE("cpu-simd kernels match the float64 reference with every instruction set this CPU runs") {
  if (!simd_kernels_built()) return;
  TargetScope restore;
  const test::Kernels k{kSimdKernels, {}, {}};
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);  // more threads than boxes of one colour at the small levels
  for (const std::string& target : simd_targets_supported()) {
    CAPTURE(target);
    use_simd_target(target);
    for (const test::NearFieldInput& in : test::near_field_inputs()) {
      CAPTURE(in.what);
      test::check_near_field(k, in.p, in.level, in.domain, test::kBothPrecisions, {1e-3, 0.0});
    }
    // Boxes of 1..600 particles: tiles of targets with every remainder, partial last vectors.
    for (std::int64_t ppb : {1, 2, 3, 5, 15, 17, 33, 600}) {
      CAPTURE(ppb);
      const int level = ppb > 100 ? 1 : 3;
      test::check_near_field(k, test::make_exact(2, level, ppb, 40 + ppb), level, "", test::kBothPrecisions);
      test::check_near_field(k, test::make_exact(3, 1, ppb, 50 + ppb), 1, "", {Precision::f32});
    }
    // Crowded boxes: cpu-simd-omp-n3 cuts their targets into chunks computed apart, the last one
    // partial: by default (rule `share`) boxes of more than 256 particles and 1/1024 of the pairs in
    // chunks of 256 (so also the boxes of 600 above), with NEARFIELD_N3_CROWD=size boxes of more
    // than 1024 in chunks of 512.
    for (const char* rule : {"share", "size"}) {
      CAPTURE(rule);
      test::EnvScope crowd("NEARFIELD_N3_CROWD", rule);
      test::check_near_field(k, test::make_exact(2, 1, 1100, 71), 1, "", test::kBothPrecisions);
      test::check_near_field(k, test::make_exact(3, 1, 1030, 72), 1, "", {Precision::f32});
    }
    {  // an unknown rule or a wave that is not a count is refused, never taken for the default
      test::EnvScope crowd("NEARFIELD_N3_CROWD", "bogus");
      MethodSetup s;
      s.level = 1;
      CHECK_THROWS_WITH_AS(test::forces(find_kernel("cpu-simd-omp-n3"), test::make_exact(2, 1, 300, 73), s),
                           doctest::Contains("expected size or share"), UsageError);
      crowd.set(nullptr);
      test::EnvScope wave("NEARFIELD_N3_WAVE", "1M");  // atoi had read 1
      CHECK_THROWS_WITH_AS(test::forces(find_kernel("cpu-simd-omp-n3"), test::make_exact(2, 1, 300, 73), s),
                           doctest::Contains("NEARFIELD_N3_WAVE=1M: expected a whole number"), UsageError);
    }
    // Coincident points, eps = 0: finite, and the coincident pairs contribute zero.
    std::vector<std::vector<double>> flat(40, {0.3, 0.3});
    for (int i = 0; i < 40; ++i) flat.push_back({0.6 + 0.001 * i, 0.7});
    test::check_near_field(k, test::from_points(2, flat), 2, "", test::kBothPrecisions, {0.0, 1e-3});
  }
  omp_set_num_threads(before);
}

TEST_CASE("cpu-simd-omp-n3 gives the same bits at any thread count (colour phases, crowded boxes' chunks)") {
  if (!simd_kernels_built()) return;
  // Clusters at level 3, a level-1 input whose every box holds 1100 particles (crowded: chunks), and
  // a 2D level-3 one of 1100 a box (several blocks with chunks in each colour phase). The chunks are
  // scattered in waves; NEARFIELD_N3_WAVE=1 cuts a wave after one chunk a thread (24 waves on one
  // thread, 6 on four in the level-1 input), which must not change a bit either. Both crowding
  // rules (NEARFIELD_N3_CROWD): their chunks differ, so their bits may, each its own at any count.
  const std::vector<std::pair<Particles, int>> inputs = {{test::make("clusters", 3, 5000, 12), 3},
                                                         {test::make_exact(3, 1, 1100, 13), 1},
                                                         {test::make_exact(2, 3, 1100, 14), 3}};
  const int before = omp_get_max_threads();
  for (const auto& input : inputs) {
    const Particles& p = input.first;
    const int level = input.second;  // not a structured binding: CAPTURE's lambda takes it (clang, C++17)
    CAPTURE(level);
    MethodSetup s;
    s.level = level;
    s.domain = default_domain(p);
    s.precision = Precision::f32;
    for (const char* rule : {"size", "share"}) {
      CAPTURE(rule);
      test::EnvScope crowd("NEARFIELD_N3_CROWD", rule);
      std::vector<double> first;
      for (const char* wave : {static_cast<const char*>(nullptr), "1"}) {
        test::EnvScope scope("NEARFIELD_N3_WAVE", wave);
        for (int threads : {1, 2, 3, 4}) {
          CAPTURE(threads);
          CAPTURE(wave != nullptr);
          omp_set_num_threads(threads);
          const std::vector<double> a = test::forces(find_kernel("cpu-simd-omp-n3"), p, s);
          if (first.empty()) first = a;
          CHECK(test::same_bits(a, first));
        }
      }
    }
  }
  omp_set_num_threads(before);
}
