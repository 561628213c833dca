// The CPU near-field kernels against the float64 reference, counting mode, and validate.
#include <omp.h>

#include <chrono>
#include <limits>
#include <set>

#include "core/errors.h"
#include "physics/interaction.h"
#include "extreme_inputs.h"
#include "force_checks.h"
#include "measure/benchmark.h"
#include "measure/model.h"
#include "tree/box_set.h"

using namespace nf;

namespace {
// Every registered CPU near-field kernel: a new one is checked here by registering it.
const std::vector<std::string> kCpuKernels = test::kernel_names(kNearField, kGpu);
}

TEST_CASE("CPU near-field kernels match the float64 reference on random and adversarial inputs") {
  for (const test::NearFieldInput& in : test::near_field_inputs())
    for (Precision prec : {Precision::f32, Precision::f64}) {
      CAPTURE(in.what);
      const Domain d = resolve_domain(in.p, in.domain, "test");
      const auto ref = test::naive_reference(in.p, in.level, d, 1e-3, prec, false);
      for (const std::string& k : kCpuKernels) test::check_kernel(in.p, {k, prec, in.level, 1e-3, Mask::near, in.domain}, ref);
    }
}

TEST_CASE("level 1: the near field is every pair") {
  const Particles p = test::make("plummer", 2, 700, 3);
  const auto all = test::naive_reference(p, 1, default_domain(p), 1e-3, Precision::f64, true);
  for (const std::string& k : kCpuKernels) test::check_kernel(p, {k, Precision::f64, 1, 1e-3, Mask::near, ""}, all);
}

TEST_CASE("eps = 0 with coincident points: finite, and the coincident pairs contribute zero") {
  std::vector<std::vector<double>> pts(50, {0.3, 0.3});
  for (int i = 0; i < 50; ++i) pts.push_back({0.6 + 0.001 * i, 0.7});
  const Particles p = test::from_points(2, pts);
  for (Precision prec : {Precision::f32, Precision::f64})
    for (const std::string& k : kCpuKernels) test::check_kernel(p, {k, prec, 2, 0.0, Mask::near, ""});
}

TEST_CASE("counting mode: kernels evaluate exactly the near-field pairs (half of them with Newton-3)") {
  for (int dim : {2, 3})
    for (int level : {0, 1, 2, 3})
      for (std::int64_t ppb : {1, 3, 8}) {
        if (dim == 3 && level == 3 && ppb == 8) continue;
        const Particles p = test::make_exact(dim, level, ppb);
        const std::uint64_t full = cp_bpb(dim, level, ppb);  // the model's N(P-1) + B P^2
        CHECK(near_field_interactions(count_boxes(p, level, default_domain(p))) == full);
        for (const std::string& k : kCpuKernels) {
          CAPTURE(k);
          CHECK(test::count_interactions(p, k, level) == (find_kernel(k).newton3() ? cp_bpb_n3(dim, level, ppb) : full));
        }
      }
}

TEST_CASE("validate runs every CPU kernel and reports PASS; a failing kernel exits 1") {
  auto r = test::run_cli({"validate", "--dist", "clusters", "--dim", "3", "--n", "3000", "--level", "3", "--precision",
                          "float,double", "--kernel", "cpu-serial,cpu-n3,cpu-omp,cpu-omp-n3,cpu-allpairs"});
  INFO(r.out);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("all kernels PASS") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);
  CHECK(r.out.find("cpu-allpairs --mask near, float64 on float32-rounded inputs") != std::string::npos);
}

// --- the registry ------------------------------------------------------------------------------
namespace nf {
extern const CpuNearFieldKernels cpu_serial_kernels;  // the registered cpu-serial (nearfield_cpu.cc)
}
namespace {

template <int D, class T>
void cpu_serial(const HostNearField<T>& f) {
  cpu_serial_kernels.get<D, T>()(f);
}

// Deliberately wrong kernels, registered only inside the tests below.
template <int D, class T>
void wrong_skips_own_box(const HostNearField<T>& f) {  // a plausible bug: the father box is forgotten
  const Tree& t = *f.tree;
  const SoftenedGravity<D, T> g{f.eps2};
  for (std::uint32_t b = 0; b < t.nbox; ++b)
    for (std::uint32_t i = t.box_start[b]; i < t.box_start[b + 1]; ++i) {
      Acc4<T> a{0, 0, 0, 0};
      for (std::uint32_t k = t.full.offset[b]; k < t.full.offset[b + 1]; ++k)
        for (std::uint32_t j = t.box_start[t.full.ids[k]]; j < t.box_start[t.full.ids[k] + 1]; ++j) g(f.bodies[i], f.bodies[j], a);
      f.acc[i] = a;
    }
}
template <int D, class T>
void wrong_one_nan(const HostNearField<T>& f) {  // right everywhere but one NaN
  cpu_serial<D, T>(f);
  if (f.tree->particles() > 0) f.acc[0].x = std::numeric_limits<T>::quiet_NaN();
}
template <int D, class T>
void wrong_not_repeatable(const HostNearField<T>& f) {  // accurate, but drifts by an ulp per run
  static int runs = 0;
  cpu_serial<D, T>(f);
  if (f.tree->particles() > 0) f.acc[0].x = std::nextafter(f.acc[0].x, T(++runs));
}

test::CliResult validate_clusters(const std::string& kernel) {
  return test::run_cli({"validate", "--dist", "clusters", "--dim", "2", "--n", "1500", "--level", "3", "--precision",
                        "float,double", "--kernel", kernel});
}

}  // namespace

TEST_CASE("the registry: unique names, a factory for every kernel, unknown names refused") {
  std::set<std::string> names;
  for (const KernelInfo& k : all_kernels()) {
    CAPTURE(k.name);
    CHECK(names.insert(k.name).second);
    CHECK(static_cast<bool>(k.make));
    CHECK(!k.summary.empty());
    CHECK(k.gpu() == bool(k.traits & kGpu));
    CHECK(k.newton3() == bool(k.traits & kNewton3));
  }
  CHECK_THROWS_AS(find_kernel("bpb-n4"), UsageError);
  CHECK_THROWS_AS(parse_kernel_list("cpu-serial,nosuch"), UsageError);
  // bench --list shows every kernel with its traits.
  auto r = test::run_cli({"bench", "--list"});
  CHECK(r.code == 0);
  for (const KernelInfo& k : all_kernels()) CHECK(r.out.find(k.name) != std::string::npos);
  CHECK(r.out.find("Newton-3, atomics, not deterministic") != std::string::npos);  // bpb-n3
  // Without a GPU a GPU kernel is refused with the reason, never replaced by another kernel.
  if (!gpu::available()) {
    r = test::run_cli({"validate", "--dist", "uniform", "--n", "100", "--level", "2", "--kernel", "bpb"});
    CHECK(r.code == 2);
    CHECK(r.err.find("bpb") != std::string::npos);
  }
}

TEST_CASE("a registered kernel runs in every command; validate FAILs wrong ones, NaN never passes") {
  const unsigned traits = kNearField | kDeterministic | kDenseTree;
  {
    KernelRegistration reg({"test-skips-own-box", traits, "test only", cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(wrong_skips_own_box))});
    CHECK(test::kernel_names(kNearField, kGpu).back() == "test-skips-own-box");
    const auto r = validate_clusters("cpu-serial,test-skips-own-box");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("some kernels FAIL") != std::string::npos);
    CHECK(r.out.find("test-skips-own-box") != std::string::npos);
    // The same kernel through forces (a registered kernel needs nothing else to run).
    test::TempDir dir;
    const auto f = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel",
                                  "test-skips-own-box", "--output", dir.file("a.csv")});
    CHECK(f.code == 0);
  }
  CHECK_THROWS_AS(find_kernel("test-skips-own-box"), UsageError);  // gone with its registration
  {
    KernelRegistration reg({"test-one-nan", traits, "test only", cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(wrong_one_nan))});
    const auto r = validate_clusters("test-one-nan");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("nan") != std::string::npos);
    CHECK(r.out.find("PASS") == std::string::npos);
  }
  {
    KernelRegistration reg({"test-not-repeatable", traits, "test only", cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(wrong_not_repeatable))});
    const auto r = validate_clusters("test-not-repeatable");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("DIFFERS") != std::string::npos);
  }
  CHECK_THROWS_AS(KernelRegistration({"bpb", traits, "duplicate", cpu_near_field(cpu_serial_kernels)}), UsageError);
}

TEST_CASE("cpu-omp-n3 is bitwise repeatable at a fixed thread count, on clustered input") {
  const int before = omp_get_max_threads();
  const Particles p = test::make("clusters", 3, 4000, 11);
  for (int threads : {3, 4}) {
    omp_set_num_threads(threads);
    MethodSetup s;
    s.level = 3;
    s.domain = default_domain(p);
    s.precision = Precision::f32;
    auto m = make_method(find_kernel("cpu-omp-n3"), s, p);
    m->prepare(p);
    m->evaluate();
    const std::vector<double> first = m->accelerations();
    for (int run = 0; run < 4; ++run) {
      m->poison_output();
      m->evaluate();
      CHECK(m->accelerations() == first);
    }
  }
  omp_set_num_threads(before);
}

TEST_CASE("CPU near-field kernels on extreme layouts (dense-layout kernels where the level allows)") {
  for (const test::ExtremeInput& in : test::extreme_inputs()) {
    if (!in.dense_ok) continue;  // every CPU kernel reads the paper's dense layout
    CAPTURE(in.name);
    const auto ref = test::naive_reference(in.particles, in.level, default_domain(in.particles), 1e-3, Precision::f64, false);
    for (const std::string& k : kCpuKernels) test::check_kernel(in.particles, {k, Precision::f64, in.level, 1e-3, Mask::near, ""}, ref);
  }
}

TEST_CASE("benchmark warm-up: with any warm-up run, at least kMinWarmupMs of them; none when asked for none") {
  const Particles p = test::make("uniform", 2, 40, 3);
  MethodSetup s;
  s.level = 2;
  s.domain = default_domain(p);
  const KernelInfo& k = find_kernel("cpu-serial");
  const auto time = [&](int warmup) {
    auto m = make_method(k, s, p);
    m->prepare(p);
    return time_method(*m, warmup, 1);
  };
  using clock = std::chrono::steady_clock;
  // One warm-up run of a kernel of microseconds: the floor keeps warming up for kMinWarmupMs.
  auto t0 = clock::now();
  const MethodTiming warm = time(1);
  const double with_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  CHECK(with_ms >= kMinWarmupMs);
  CHECK(warm.warmup == 1);  // the requested count, as the results file records it
  // No warm-up asked for: none done (a CPU point of minutes must not run once more). Its one
  // timed run of 40 particles takes far less than the floor.
  t0 = clock::now();
  const MethodTiming cold = time(0);
  const double without_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  CHECK(cold.reps == 1);
  CHECK(without_ms < with_ms);
}
