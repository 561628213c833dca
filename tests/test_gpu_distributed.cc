// Forces on several GPUs (one process) against forces on one: every GPU near-field kernel of the
// registry, uniform and clustered inputs, 2D and 3D, float and double, cross pairs once and twice;
// simulate --gpus against simulate on one GPU. With 2 CUDA devices and a loadable libnccl the
// parts run on real GPUs through NCCL; otherwise (one GPU, or no NCCL) every test sets
// NEARFIELD_EMULATE_GPUS=1 for itself and the parts run on GPU 0 with device copies between them
// (the same decomposition, exchange plan and kernels; only the transport and the placement
// differ). NEARFIELD_REQUIRE_GPUS=2 (or more) demands real GPUs: the tests then fail instead.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tree/domain.h"
#include "core/env.h"
#include "core/errors.h"
#include "methods/force_method.h"
#include "measure/validation.h"
#include "helpers.h"
#include "io/particle_file.h"
#include "distributed/spread_method.h"
#include "distributed/nccl_transport.h"
#include "sim_checks.h"

using namespace nf;

namespace {

constexpr const char* kEmulate = "NEARFIELD_EMULATE_GPUS";

// True when the test can run on `gpus` GPUs: real ones (that many CUDA devices and a loadable
// libnccl), or else emulated ones (`emulate` sets NEARFIELD_EMULATE_GPUS=1 for the test). Skips
// without a GPU; fails when NEARFIELD_REQUIRE_GPUS asks for real GPUs that are not there.
bool gpus_or_skip(int gpus, test::EnvScope& emulate) {
  if (!test::gpu_or_skip()) return false;
  if (emulating_gpus()) {
    MESSAGE(std::string(kEmulate) << "=1 (set outside): " << gpus << " GPUs emulated on GPU 0");
    return true;
  }
  const long long asked = env::integer("NEARFIELD_REQUIRE_GPUS", 0, 64, 0);  // atoi had read "two" as 0
  const bool required = asked >= gpus;
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
  if (required) FAIL("NEARFIELD_REQUIRE_GPUS=" << asked << " but " << why);
  emulate.set("1");
  MESSAGE("emulated: " << gpus << " GPUs on GPU 0 (" << std::string(kEmulate) << "=1) because " << why);
  return true;
}

// Accelerations of one evaluation (output poisoned first); spread, also a second evaluation
// (the exchange runs again) with its stage times.
std::vector<double> forces(const KernelInfo& k, const Particles& p, const MethodSetup& s, const Spread& spread = {}) {
  auto m = make_spread_method(k, s, p, spread);
  m->prepare(p);
  m->poison_output();
  m->evaluate();
  if (spread.gpus > 1) {
    m->evaluate();
    const StageTimes t = m->times();
    CHECK(t.evaluate_ms > 0);
    CHECK(t.get("kernel_max") > 0);
    CHECK(t.get("kernel_max") >= t.get("kernel_mean"));
  }
  return m->accelerations();
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
  test::EnvScope emulate(kEmulate);
  if (!gpus_or_skip(2, emulate)) return;
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
          MethodSetup s;
          s.level = in.level;
          s.domain = default_domain(in.p);
          s.softening = 1e-3;
          s.precision = prec;
          const std::vector<double> one = forces(*k, in.p, s);
          const std::vector<double> two = forces(*k, in.p, s, {2, cross});
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
  test::EnvScope emulate(kEmulate);
  if (!gpus_or_skip(2, emulate)) return;
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
      MethodSetup s;
      s.level = in.level;
      s.domain = default_domain(in.p);
      const std::vector<double> one = forces(k, in.p, s);
      const std::vector<double> two = forces(k, in.p, s, {2, CrossPairs::automatic});
      if (matches_one_gpu_bitwise(k, CrossPairs::automatic))
        CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)) == 0);
      else
        CHECK(rel_l2(two, one) <= tolerance(s.precision));
    }
}

TEST_CASE("validate --gpus 2 and bench --gpus 1,2 through the command line" * doctest::test_suite("gpu")) {
  test::EnvScope emulate(kEmulate);
  if (!gpus_or_skip(2, emulate)) return;
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
  // gpus, processes, cross_pairs
  CHECK(csv.find(",2,1,once,") != std::string::npos);   // n3-rotate on 2 GPUs, counterforces returned
  CHECK(csv.find(",2,1,twice,") != std::string::npos);  // bpb on 2 GPUs
}

TEST_CASE("--gpus beyond this machine's devices is refused before any work, unless emulated" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  test::EnvScope emulate(kEmulate, nullptr);
  const int too_many = gpu::device_count() + 1;
  CHECK_THROWS_AS(check_gpus(find_kernel("bpb"), too_many), UsageError);
  test::TempDir dir;
  auto forces_cli = [&](int gpus, const std::string& file) {
    return test::run_cli({"forces", "--dist", "clusters", "--dim", "3", "--n", "5000", "--level", "3", "--kernel", "bpb",
                          "--gpus", std::to_string(gpus), "--output", dir.file(file)});
  };
  auto r = forces_cli(too_many, "never.csv");
  CHECK(r.code == 2);
  CHECK(r.err.find("--gpus") != std::string::npos);
  CHECK(r.err.find(kEmulate) != std::string::npos);  // the message names the testing aid
  CHECK_FALSE(std::filesystem::exists(dir.file("never.csv")));
  // Emulated, the same request runs on GPU 0 and gives the one-GPU forces bit for bit (bpb).
  emulate.set("1");
  CHECK_NOTHROW(check_gpus(find_kernel("bpb"), too_many));
  r = forces_cli(too_many, "many.csv");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  r = forces_cli(1, "one.csv");
  REQUIRE(r.code == 0);
  CHECK(test::read_text(dir.file("many.csv")) == test::read_text(dir.file("one.csv")));
}

TEST_CASE("emulated GPUs: 3 and 5 parts on GPU 0 equal one GPU (2D and 3D, once and twice)" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  test::EnvScope emulate(kEmulate, "1");
  const std::vector<Input> inputs = {{"clusters 2D", test::make("clusters", 2, 12000, 41), 6},
                                     {"plummer 3D", test::make("plummer", 3, 12000, 42), 3}};
  for (const Input& in : inputs)
    for (const char* name : {"bpb", "bpb-lb", "n3-rotate", "n3-colour"})
      for (int gpus : {3, 5}) {
        CAPTURE(in.name);
        CAPTURE(name);
        CAPTURE(gpus);
        const KernelInfo& k = find_kernel(name);
        MethodSetup s;
        s.level = in.level;
        s.domain = default_domain(in.p);
        const std::vector<double> one = forces(k, in.p, s);
        const std::vector<double> many = forces(k, in.p, s, {gpus, CrossPairs::automatic});
        REQUIRE(many.size() == one.size());
        if (matches_one_gpu_bitwise(k, CrossPairs::automatic))
          CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(double)) == 0);
        else
          CHECK(rel_l2(many, one) <= tolerance(s.precision));
      }
}

namespace {

// Snapshots every step: the one-GPU field keeps the particles in its tree's order between steps of
// the snapshot grid and sums in that order (README "device-resident steps"), while the multi-GPU
// field starts from input order every step; on the grid both sum in the order of input rows.
std::vector<std::string> sim_args(const std::string& in, const std::string& dir, const std::string& kernel,
                                  const std::string& precision, const std::string& level, const std::string& steps,
                                  int gpus, std::vector<std::string> more = {}) {
  std::vector<std::string> a = {"--input", in, "--kernel", kernel, "--precision", precision, "--softening", "0.05",
                                "--dt", "0.0078125", "--steps", steps, "--snapshot-every", "1", "--output-dir", dir,
                                "--format", "bin", "--level", level, "--gpus", std::to_string(gpus)};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace

TEST_CASE("simulate --gpus 2 equals simulate --gpus 1: bit for bit for bpb, within rounding for n3-rotate" *
          doctest::test_suite("gpu")) {
  test::EnvScope emulate(kEmulate);
  if (!gpus_or_skip(2, emulate)) return;
  using test::energy_rows;
  using test::read_text;
  using test::simulate_ok;
  using test::snapshot;
  test::TempDir dir;
  struct Case {
    std::string name;
    Particles p;
    std::string level;
  };
  const std::vector<Case> cases = {{"plummer3d", test::make("plummer", 3, 3000, 51), "3"},
                                   {"clusters2d", test::make("clusters", 2, 3000, 52), "5"},
                                   {"plummer3d-auto", test::make("plummer", 3, 3000, 53), "auto"}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string in = dir.file(c.name + ".bin");
    io::write_particles(in, c.p);
    // bpb computes cross pairs twice and is deterministic: the two-GPU forces are the one-GPU forces
    // bit for bit, and so is every step of the trajectory (the leapfrog rounds alike on host and GPU).
    REQUIRE(matches_one_gpu_bitwise(find_kernel("bpb"), CrossPairs::automatic));
    const std::string one = c.name + "-bpb-1", two = c.name + "-bpb-2";
    simulate_ok(sim_args(in, dir.file(one), "bpb", "float", c.level, "8", 1));
    const test::CliResult r = simulate_ok(sim_args(in, dir.file(two), "bpb", "float", c.level, "8", 2));
    CHECK(r.out.find("forces on 2 GPUs: positions pass through the host every step") != std::string::npos);
    CHECK(test::max_position_diff(snapshot(dir, two, 8, "bin"), c.p) > 0);  // the particles moved
    for (const char* snap : {"/snap_000000.bin", "/snap_000004.bin", "/snap_000008.bin", "/energy.csv"})
      CHECK_MESSAGE(read_text(dir.file(two + snap)) == read_text(dir.file(one + snap)), snap);
    const sim::RunDescription ini1 = sim::RunDescription::read(dir.file(one + "/run.ini"));
    const sim::RunDescription ini2 = sim::RunDescription::read(dir.file(two + "/run.ini"));
    CHECK(ini1.get("gpus") == "1");
    CHECK(ini2.get("gpus") == "2");
    CHECK(ini2.get("level") == ini1.get("level"));  // auto chose the same level
    CHECK(ini2.get("level") != "auto");
    // n3-rotate sends counterforces back (cross pairs once): the same run up to summation order.
    simulate_ok(sim_args(in, dir.file(c.name + "-n3-1"), "n3-rotate", "double", c.level, "8", 1));
    simulate_ok(sim_args(in, dir.file(c.name + "-n3-2"), "n3-rotate", "double", c.level, "8", 2));
    const Particles a = snapshot(dir, c.name + "-n3-1", 8, "bin"), b = snapshot(dir, c.name + "-n3-2", 8, "bin");
    CHECK(test::max_position_diff(a, b) <= 1e-12);
    CHECK(test::max_velocity_diff(a, b) <= 1e-10);
    CHECK(energy_rows(dir, c.name + "-n3-2").back().potential ==
          doctest::Approx(energy_rows(dir, c.name + "-n3-1").back().potential).epsilon(1e-12));
  }
  // --resume on 2 GPUs continues bit for bit; on 1 GPU it is refused; --timing records the GPUs.
  const std::string in = dir.file("plummer3d.bin");
  simulate_ok(sim_args(in, dir.file("whole"), "bpb", "float", "3", "10", 2, {"--timing", dir.file("t.csv")}));
  simulate_ok(sim_args(in, dir.file("part"), "bpb", "float", "3", "5", 2));
  const test::CliResult refused = test::run_cli([&] {
    auto a = sim_args(in, dir.file("part"), "bpb", "float", "3", "10", 1, {"--resume"});
    a.insert(a.begin(), "simulate");
    return a;
  }());
  CHECK(refused.code == 2);
  CHECK(refused.err.find("--gpus 1 (the run has 2)") != std::string::npos);
  simulate_ok(sim_args(in, dir.file("part"), "bpb", "float", "3", "10", 2, {"--resume"}));
  CHECK(read_text(dir.file("part/snap_000010.bin")) == read_text(dir.file("whole/snap_000010.bin")));
  CHECK(read_text(dir.file("t.csv")).find(",0.0078125,1,2,1,10,") != std::string::npos);  // dt, subsample, gpus, processes, steps
}
