// methods/: the registry and the force-method interface. The registry's listing, find_kernel,
// the trait selections and bench --list agree; every kernel this machine can run is made through
// make_method and runs where its traits say; setups a kernel cannot take are refused; a kernel
// registered here (deliberately wrong ones) runs in every command and validate FAILs it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "methods/full_method.h"
#include "physics/interaction.h"
#include "force_checks.h"

using namespace nf;

namespace {

// Deliberately wrong kernels, registered only inside the tests below.
template <int D, class T>
void wrong_skips_own_box(const HostNearField<T>& f) {  // a plausible bug: the father box is forgotten
  const Tree& t = *f.tree;
  const SoftenedGravity<D, T> g{f.eps2};
  for (std::uint32_t b = 0; b < t.nbox; ++b)
    for (std::uint32_t i = t.box_start[b]; i < t.box_start[b + 1]; ++i) {
      Acc4<T> a{0, 0, 0, 0};
      for (std::uint32_t k = t.full.offset[b]; k < t.full.offset[b + 1]; ++k)
        for (std::uint32_t j = t.box_start[t.full.ids[k]]; j < t.box_start[t.full.ids[k] + 1]; ++j)
          g(f.bodies[i], f.bodies[j], a);
      f.acc[i] = a;
    }
}
template <int D, class T>
void wrong_one_nan(const HostNearField<T>& f) {  // right everywhere but one NaN
  test::cpu_serial_near_field<D, T>(f);
  if (f.tree->particles() > 0) f.acc[0].x = std::numeric_limits<T>::quiet_NaN();
}
template <int D, class T>
void wrong_not_repeatable(const HostNearField<T>& f) {  // accurate, but an ulp up or down by turns
  // (Stepping toward the run count moved every run the same way wherever the value lies outside
  // (1, 2): the clang build of the sanitizer pass computed such a value and the kernel repeated.)
  static int runs = 0;
  test::cpu_serial_near_field<D, T>(f);
  const T away = ++runs % 2 ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  if (f.tree->particles() > 0) f.acc[0].x = std::nextafter(f.acc[0].x, away);
}

test::CliResult validate_clusters(const std::string& kernel) {
  return test::run_cli({"validate", "--dist", "clusters", "--dim", "2", "--n", "1500", "--level", "3", "--precision",
                        "float,double", "--kernel", kernel});
}

}  // namespace

TEST_CASE("the registry: the listing, find_kernel and the trait selections agree; unknown names refused") {
  std::set<std::string> names;
  std::vector<std::string> runnable;
  for (const KernelInfo& k : all_kernels()) {
    CAPTURE(k.name);
    CHECK(names.insert(k.name).second);  // unique
    CHECK(!k.summary.empty());
    CHECK(&find_kernel(k.name) == &k);  // the entry the listing shows is the one a name finds
    // Selected by its own traits, never by traits it lacks; a part factory only where a kernel
    // can be spread (GPU near-field kernels).
    const auto with = kernels_with(k.traits);
    CHECK(std::count(with.begin(), with.end(), &k) == 1);
    for (unsigned t = 1; t != 0 && t <= kSmallBoxes; t <<= 1)
      if (!k.has(t)) {
        const auto without = kernels_with(0, t);
        CHECK(std::count(without.begin(), without.end(), &k) == 1);
        const auto wrong = kernels_with(t);
        CHECK(std::count(wrong.begin(), wrong.end(), &k) == 0);
      }
    if (k.make_part) CHECK((k.gpu() && k.near_field()));
    if (!k.gpu() || gpu::available()) runnable.push_back(k.name);
  }
  CHECK(available_kernels() == runnable);
  CHECK(parse_kernel_list("all") == runnable);
  CHECK(parse_kernel_list("") == runnable);
  CHECK(parse_kernel_list("cpu-n3,,bpb") == std::vector<std::string>{"cpu-n3", "bpb"});
  CHECK_THROWS_AS(find_kernel("bpb-n4"), UsageError);
  CHECK_THROWS_AS(parse_kernel_list("cpu-serial,nosuch"), UsageError);
  CHECK_THROWS_AS(parse_kernel_list(","), UsageError);
  // bench --list shows every kernel with its traits spelled out.
  const auto r = test::run_cli({"bench", "--list"});
  CHECK(r.code == 0);
  std::istringstream lines(r.out);
  std::set<std::string> listed;
  for (std::string line; std::getline(lines, line);)
    for (const KernelInfo& k : all_kernels())
      if (line.find(k.name + " ") != std::string::npos && line.find(k.trait_list()) != std::string::npos)
        listed.insert(k.name);
  CHECK(listed == names);
  CHECK(find_kernel("bpb-n3").trait_list().find("Newton-3, atomics, not deterministic") != std::string::npos);
}

TEST_CASE("every kernel this machine can run is made through make_method and runs where its traits say") {
  const Particles p = test::make("uniform", 2, 200, 5);
  MethodSetup s;
  s.level = 2;
  s.domain = default_domain(p);
  for (const std::string& name : available_kernels()) {
    CAPTURE(name);
    const KernelInfo& k = find_kernel(name);
    auto m = make_method(k, s, p);
    REQUIRE(m);
    CHECK(m->on_device() == k.gpu());
    CHECK(m->model() == (k.far_field()    ? ForceModel::fmm
                         : k.near_field() ? ForceModel::near_field
                                          : ForceModel::all_pairs));
    m->prepare(p);
    m->evaluate();
    const std::vector<double> a = m->accelerations();
    CHECK(a.size() == p.size() * 2);
    CHECK(std::all_of(a.begin(), a.end(), [](double v) { return std::isfinite(v); }));
    CHECK(std::any_of(a.begin(), a.end(), [](double v) { return v != 0.0; }));
  }
  // Without a GPU a GPU kernel is refused with the reason, never replaced by another kernel.
  if (gpu::available()) {
    MESSAGE("skipped the refusal of GPU kernels without a GPU: this machine has one");
  } else {
    for (const KernelInfo* k : kernels_with(kGpu)) {
      CAPTURE(k->name);
      CHECK_THROWS_WITH_AS(make_method(*k, s, p), doctest::Contains("needs a CUDA GPU"), UsageError);
    }
    const auto r = test::run_cli({"validate", "--dist", "uniform", "--n", "100", "--level", "2", "--kernel", "bpb"});
    CHECK(r.code == 2);
    CHECK(r.err.find("bpb") != std::string::npos);
  }
}

TEST_CASE("setups a kernel cannot take are refused before any work") {
  const Particles p = test::make("uniform", 3, 50, 5);
  const KernelInfo& near = find_kernel("cpu-serial");
  const KernelInfo& all = find_kernel("cpu-allpairs");
  const auto refused = [&](const KernelInfo& k, const MethodSetup& s, const char* why) {
    CAPTURE(k.name);
    CHECK_THROWS_WITH_AS(make_method(k, s, p), doctest::Contains(why), UsageError);
  };
  MethodSetup s;
  s.level = 2;
  s.softening = -1e-3;
  refused(near, s, "--softening");
  s.softening = std::numeric_limits<double>::infinity();
  refused(all, s, "--softening");
  s.softening = 1e-3;
  s.subsample = 0;
  refused(all, s, "--subsample must be at least 1");
  s.subsample = 2;
  refused(near, s, "near-field kernel");
  refused(find_kernel("cpu-fmm"), s, "cpu-fmm is a full method");  // its near part had been named
  s.mask = Mask::near;
  refused(all, s, "--mask near");
  s = MethodSetup();
  s.count_interactions = true;
  refused(all, s, "counting mode");
  s.level = 2;
  CHECK_NOTHROW(make_method(near, s, p));
  // A sub-sampled all-pairs method says so.
  s = MethodSetup();
  s.subsample = 3;
  CHECK(make_method(all, s, p)->model() == ForceModel::subsampled);
}

TEST_CASE("a registered kernel runs in every command; validate FAILs wrong ones, NaN never passes") {
  const unsigned traits = kNearField | kDeterministic | kDenseTree;
  {
    KernelRegistration reg({"test-skips-own-box", traits, "test only",
                            cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(wrong_skips_own_box))});
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
    KernelRegistration reg(
        {"test-one-nan", traits, "test only", cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(wrong_one_nan))});
    const auto r = validate_clusters("test-one-nan");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("nan") != std::string::npos);
    CHECK(r.out.find("PASS") == std::string::npos);
  }
  {
    KernelRegistration reg({"test-not-repeatable", traits, "test only",
                            cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(wrong_not_repeatable))});
    const auto r = validate_clusters("test-not-repeatable");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("DIFFERS") != std::string::npos);
  }
  CHECK_THROWS_AS(KernelRegistration({"bpb", traits, "duplicate", cpu_near_field(cpu_serial_kernels)}), UsageError);
}

TEST_CASE("float32 inputs a kernel cannot compute on are refused before any work, double ones run") {
  MethodSetup s;
  s.level = 3;
  const auto refused = [&](const char* kernel, const Particles& p, const char* why) {
    CAPTURE(kernel);
    CHECK_THROWS_WITH_AS(make_method(find_kernel(kernel), s, p), doctest::Contains(why), UsageError);
  };
  // Past float32's range: a position, a mass, and positions whose squared distances would be.
  Particles huge = test::from_points(2, {{1e300, 0.2}, {-1e300, 0.2}});
  refused("cpu-serial", huge, "has x = 1e+300");
  refused("cpu-allpairs", huge, "beyond float32's range");
  Particles heavy = test::from_points(3, {{0.1, 0.2, 0.3}, {0.4, 0.5, 0.6}});
  heavy.m[1] = 1e39;
  refused("cpu-simd", heavy, "has m = 1e+39");
  const Particles wide = test::from_points(2, {{1e20, 0.2}, {-1e20, 0.2}});
  refused("cpu-serial", wide, "squared distances");
  // 1e13 apart: 1 / d^3 = 1e-39, below float32's normal numbers (the pair's force had come out 0).
  const Particles apart = test::from_points(3, {{0, 0, 0}, {1e13, 0, 0}, {1e13, 1, 0}});
  refused("cpu-serial", apart, "1 / d^3 underflows");
  refused("cpu-fmm", apart, "1 / d^3 underflows");
  CHECK_NOTHROW(make_method(find_kernel("cpu-serial"), s, test::from_points(3, {{0, 0, 0}, {1e11, 0, 0}, {1e11, 1, 0}})));
  s.precision = Precision::f64;
  CHECK_NOTHROW(make_method(find_kernel("cpu-serial"), s, apart));
  for (const Particles* p : std::vector<const Particles*>{&huge, &heavy, &wide})
    CHECK_NOTHROW(make_method(find_kernel("cpu-serial"), s, *p));
  s.precision = Precision::f32;

  // A full method's float32 bodies must lie in their boxes: 777 bodies in a unit square near 1e7,
  // where float32 values are 1 apart (the leaf boxes at level 3 are 1/8 wide), gave accelerations
  // of 1e19 against 3e2. Refused at level 3; and since float32 rounds them onto two values per
  // axis, every float kernel refuses them at any level (a near-field kernel had run on the rounded
  // positions); in float64 the method matches all pairs.
  std::vector<std::vector<double>> points;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 777; ++i) points.push_back({1e7 + unit(rng), 1e7 + unit(rng)});
  const Particles far = test::from_points(2, points);
  refused("cpu-fmm", far, "float32 values lie 1 apart");
  refused("cpu-fmm-adaptive", far, "float32 values lie 1 apart");
  refused("cpu-serial", far, "fewer than 1024 steps across the input");
  s.level = 1;
  refused("cpu-fmm", far, "fewer than 1024 steps across the input");
  s.level = 3;
  // 1024 float32 steps across the input and more run: the same square near 1e3 (steps of 6e-5).
  std::vector<std::vector<double>> nearer = points;
  for (auto& q : nearer) q[0] -= 1e7 - 1e3, q[1] -= 1e7 - 1e3;
  CHECK_NOTHROW(make_method(find_kernel("cpu-serial"), s, test::from_points(2, nearer)));
  s.precision = Precision::f64;
  s.domain = default_domain(far);
  const std::vector<double> fmm = test::forces(find_kernel("cpu-fmm"), far, s);
  const std::vector<double> exact = test::forces(find_kernel("cpu-allpairs"), far, s);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < fmm.size(); ++i)
    num += (fmm[i] - exact[i]) * (fmm[i] - exact[i]), den += exact[i] * exact[i];
  CHECK(std::sqrt(num / den) < 1e-3);
  // Positions move in a simulation: prepare checks again, with the domain of the new positions.
  s.precision = Precision::f32;
  s.domain.reset();
  const Particles near_origin = test::make("uniform", 2, 777, 6);
  auto m = make_method(find_kernel("cpu-fmm"), s, near_origin);
  CHECK_NOTHROW(m->prepare(near_origin));
  CHECK_THROWS_WITH_AS(m->prepare(far), doctest::Contains("float32 values lie 1 apart"), UsageError);
  // The threshold: positions reaching 2 (float32 spacing 2^-22) in a unit domain run down to level
  // 19 (leaf side 2^-19, an eighth of it 2^-22) and are refused from level 20 on.
  CHECK_NOTHROW(check_float_resolution(Domain{{1.0, 1.0, 1.0}, 1.0}, 3, 19, Precision::f32));
  CHECK_THROWS_AS(check_float_resolution(Domain{{1.0, 1.0, 1.0}, 1.0}, 3, 20, Precision::f32), UsageError);
  CHECK_NOTHROW(check_float_resolution(Domain{{1.0, 1.0, 1.0}, 1.0}, 3, 20, Precision::f64));
  // In float64 the box centres, absolute coordinates, must agree to 2^-20 of a leaf side: a cube of
  // side 1.1 at 1e13 (spacing 2e-3) had erred 1.5e-3 at level 3, and M2L had stopped with an
  // internal error at 3e14; a unit cube at 1e6 runs down to level 10 and beyond.
  CHECK_THROWS_WITH_AS(check_float_resolution(Domain{{1e13, 1e13, 1e13}, 1.1}, 3, 3, Precision::f64),
                       doctest::Contains("float64 values lie"), UsageError);
  CHECK_NOTHROW(check_float_resolution(Domain{{1e6, 1e6, 1e6}, 1.0}, 3, 12, Precision::f64));
  CHECK(deepest_resolved_level(Domain{{1e13, 1e13, 1e13}, 1.1}, 3, Precision::f64, 0, 1, 21) == 1);
  CHECK(deepest_resolved_level(Domain{{1e6, 1e6, 1e6}, 1.0}, 3, Precision::f64, 0, 1, 12) == 12);
}
