// Forces on several GPUs (one process, NCCL) against forces on one: every GPU near-field kernel
// of the registry, uniform and clustered inputs, 2D and 3D, float and double, cross pairs once
// and twice. Needs 2 CUDA devices and a loadable libnccl; skipped visibly otherwise, failed
// instead when NEARFIELD_REQUIRE_GPUS=2 (or more) demands them.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/domain.h"
#include "common/errors.h"
#include "harness/evaluation.h"
#include "harness/validation.h"
#include "helpers.h"
#include "multigpu/multi_gpu.h"
#include "multigpu/nccl_transport.h"

using namespace nf;

namespace {

bool gpus_or_skip(int gpus) {
  if (!test::gpu_or_skip()) return false;
  const char* env = std::getenv("NEARFIELD_REQUIRE_GPUS");
  const bool required = env && std::atoi(env) >= gpus;
  const int have = gpu::device_count();
  std::string why;
  if (have < gpus)
    why = "multi-GPU tests need " + std::to_string(gpus) + " CUDA devices, this machine has " + std::to_string(have);
  else {
    try {
      MESSAGE("NCCL: " << load_nccl());
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  if (why.empty()) return true;
  if (required) FAIL("NEARFIELD_REQUIRE_GPUS=" << env << " but " << why);
  MESSAGE("skipped: " << why);
  return false;
}

// Accelerations of one evaluation (output poisoned first); on several GPUs also a timed one.
std::vector<double> forces(const KernelInfo& k, const Particles& p, const ForceSetup& s) {
  auto e = prepare(k, p, s);
  e->poison_output();
  e->run();
  if (s.gpus > 1) {
    CHECK(e->run_timed_ms() > 0);  // a second, timed evaluation: the exchange runs again
    CHECK(e->span.gpus == s.gpus);
    CHECK(e->span.kernel_max_ms > 0);
    CHECK(e->span.kernel_max_ms >= e->span.kernel_mean_ms);
  }
  return e->accelerations();
}

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += (a[i] - b[i]) * (a[i] - b[i]), n += b[i] * b[i];
  return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

struct Input {
  std::string name;
  Particles p;
  int level;
};

}  // namespace

TEST_CASE("forces on 2 GPUs equal forces on 1 for every GPU near-field kernel" * doctest::test_suite("gpu")) {
  if (!gpus_or_skip(2)) return;
  const std::vector<Input> inputs = {{"uniform 2D", test::make("uniform", 2, 30000, 21), 5},
                                     {"clusters 2D", test::make("clusters", 2, 30000, 22), 7},
                                     {"uniform 3D", test::make("uniform", 3, 30000, 23), 3},
                                     {"plummer 3D", test::make("plummer", 3, 30000, 24), 4}};
  for (const Input& in : inputs)
    for (const KernelInfo* k : kernels_with(kGpu | kNearField))
      for (Precision prec : {Precision::f32, Precision::f64})
        for (CrossPairs cross : {CrossPairs::twice, CrossPairs::once}) {
          if (cross == CrossPairs::once && !k->newton3()) continue;
          CAPTURE(in.name);
          CAPTURE(k->name);
          CAPTURE(to_string(prec));
          CAPTURE(to_string(cross));
          ForceSetup s;
          s.level = in.level;
          s.domain = default_domain(in.p);
          s.softening = 1e-3;
          s.precision = prec;
          const std::vector<double> one = forces(*k, in.p, s);
          s.gpus = 2;
          s.cross_pairs = cross;
          const std::vector<double> two = forces(*k, in.p, s);
          REQUIRE(two.size() == one.size());
          bool finite = true;
          for (double v : two) finite = finite && std::isfinite(v);
          CHECK(finite);
          if (matches_one_gpu_bitwise(*k, cross))
            CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)) == 0);
          else
            CHECK(rel_l2(two, one) <= tolerance(prec));
        }
}

TEST_CASE("2 GPUs: one box (an empty part), two particles, a lopsided input" * doctest::test_suite("gpu")) {
  if (!gpus_or_skip(2)) return;
  const std::vector<Input> inputs = {
      {"one box", test::make("uniform", 2, 7, 31), 0},
      {"two particles", test::make("uniform", 3, 2, 32), 4},
      {"core", test::make("core", 2, 20000, 33), 9},  // one box holds 99%: one part does nearly all
  };
  for (const Input& in : inputs)
    for (const char* name : {"bpb", "bpb-lb", "n3-rotate", "n3-colour"}) {
      CAPTURE(in.name);
      CAPTURE(name);
      const KernelInfo& k = find_kernel(name);
      ForceSetup s;
      s.level = in.level;
      s.domain = default_domain(in.p);
      const std::vector<double> one = forces(k, in.p, s);
      s.gpus = 2;
      const std::vector<double> two = forces(k, in.p, s);
      if (matches_one_gpu_bitwise(k, s.cross_pairs))
        CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)) == 0);
      else
        CHECK(rel_l2(two, one) <= tolerance(s.precision));
    }
}

TEST_CASE("validate --gpus 2 and bench --gpus 1,2 through the command line" * doctest::test_suite("gpu")) {
  if (!gpus_or_skip(2)) return;
  test::TempDir dir;
  auto r = test::run_cli({"validate", "--dist", "clusters", "--dim", "2", "--n", "6000", "--level", "6", "--gpus", "2",
                          "--kernel", "bpb,bpb-lb,n3-rotate,n3-colour", "--cross-pairs", "auto,twice",
                          "--output", dir.file("v.csv")});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("bitwise") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);
  r = test::run_cli({"bench", "--dist", "uniform-fast", "--dim", "2", "--n", "200000", "--level", "6", "--gpus", "1,2",
                     "--kernel", "bpb,n3-rotate", "--reps", "2", "--warmup", "1", "--output", dir.file("b.csv")});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  const std::string csv = test::read_text(dir.file("b.csv"));
  CHECK(csv.find(",2,once,") != std::string::npos);   // n3-rotate on 2 GPUs, counterforces returned
  CHECK(csv.find(",2,twice,") != std::string::npos);  // bpb on 2 GPUs
}

TEST_CASE("--gpus beyond this machine's devices is refused before any work" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const int too_many = gpu::device_count() + 1;
  CHECK_THROWS_AS(check_gpus(find_kernel("bpb"), too_many), UsageError);
  const auto r = test::run_cli({"forces", "--dist", "uniform", "--n", "100", "--level", "2", "--kernel", "bpb", "--gpus",
                                std::to_string(too_many), "--output", "/tmp/never-written.csv"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--gpus") != std::string::npos);
}
