// validate --sample M (docs/design.md §4): the targets (distinct, seeded, unbiased), the sampled
// reference (the full reference's values at the targets, bit for bit, and an independent float64
// sum's to rounding), the sampled metrics (the full validation's restricted to the targets), and
// the command: a full method passes on a sample, wrong methods fail, M >= N validates every
// particle, and a bad M is refused.
#include <algorithm>
#include <cmath>
#include <set>

#include "core/errors.h"
#include "physics/interaction.h"
#include "force_checks.h"

using namespace nf;

using test::column;
using test::csv_rows;

namespace {

// A deliberately wrong method, registered only inside a test below (and test::cpu_serial_near_field
// registered as a full method).
template <int D, class T>
void slightly_strong(const HostNearField<T>& f) {  // every force 1e-4 too strong: 10x float's tolerance
  cpu_serial_kernels.get<D, T>()(f);
  for (std::uint32_t i = 0; i < f.tree->particles(); ++i) {
    f.acc[i].x *= T(1.0001);
    f.acc[i].y *= T(1.0001);
    f.acc[i].z *= T(1.0001);
  }
}

template <class T>
std::vector<T> at_targets(const std::vector<T>& v, const std::vector<std::size_t>& targets, int per) {
  std::vector<T> out;
  for (std::size_t t : targets)
    for (int d = 0; d < per; ++d) out.push_back(v[t * per + d]);
  return out;
}

}  // namespace

TEST_CASE("sample_targets: distinct, increasing, in range, fixed by the seed, unbiased; every index when M >= N") {
  const auto t = sample_targets(1000, 100, 1);
  REQUIRE(t.size() == 100);
  CHECK(std::adjacent_find(t.begin(), t.end(), [](std::size_t a, std::size_t b) { return a >= b; }) == t.end());
  CHECK(t.back() < 1000);
  CHECK(sample_targets(1000, 100, 1) == t);  // the seed fixes the sample
  CHECK(sample_targets(1000, 100, 2) != t);
  const auto most = sample_targets(1000, 999, 3);  // one left out: still distinct
  CHECK(std::set<std::size_t>(most.begin(), most.end()).size() == 999);
  std::vector<std::size_t> every(50);
  for (std::size_t i = 0; i < every.size(); ++i) every[i] = i;
  CHECK(sample_targets(50, 50, 4) == every);
  CHECK(sample_targets(50, 80, 4) == every);
  CHECK(sample_targets(50, 0, 4).empty());
  const auto big = sample_targets(std::size_t(1) << 24, 1000, 5);  // N = 2^24 without an N-sized array
  CHECK(std::set<std::size_t>(big.begin(), big.end()).size() == 1000);
  CHECK(big.back() < (std::size_t(1) << 24));
  // Each index of 10 is drawn with probability 1/2 (5 of 10): over 4000 seeds every count lies
  // within 6 sigma (sigma = 32) of 2000, and so does the count of the first index, which a biased
  // draw (always the last indices, say) would leave at 0 or 4000.
  std::vector<int> count(10, 0);
  for (std::uint64_t seed = 0; seed < 4000; ++seed)
    for (std::size_t i : sample_targets(10, 5, seed)) ++count[i];
  for (int c : count) CHECK(std::abs(c - 2000) < 190);
}

TEST_CASE("sampled validation: the full validation's metrics restricted to the sampled targets") {
  struct Case {
    std::string kernel;
    Precision prec;
    int dim, level;
  };
  // Near-field kernels against the near field, full methods against every pair: the references
  // validate picks for them.
  for (const Case& c : {Case{"cpu-serial", Precision::f32, 3, 3}, Case{"cpu-omp-n3", Precision::f64, 2, 4},
                        Case{"cpu-fmm", Precision::f32, 3, 3}, Case{"cpu-fmm", Precision::f64, 2, 4}}) {
    CAPTURE(c.kernel);
    CAPTURE(to_string(c.prec));
    const Particles p = test::make("plummer", c.dim, 2500, 17);
    const KernelInfo& k = find_kernel(c.kernel);
    const Mask mask = k.far_field() ? Mask::all : Mask::near;
    MethodSetup s;
    s.level = c.level;
    s.domain = default_domain(p);
    s.softening = 1e-3;
    s.precision = c.prec;
    if (k.far_field()) s.order = 4;  // an error well above rounding, so the metrics say something
    const std::vector<std::size_t> targets = sample_targets(p.size(), 300, 9);

    std::string name;
    const std::vector<double> sampled = sampled_ground_truth(p, s, c.prec, targets, name, mask);
    CHECK(name.find("300 sampled targets") != std::string::npos);
    REQUIRE(sampled.size() == targets.size() * p.dim);
    // The same sum as the full reference: its values at the targets, bit for bit ...
    std::string full_name;
    const std::vector<double> full = ground_truth(p, s, c.prec, p.size(), full_name, mask);
    CHECK(test::same_bits(sampled, at_targets(full, targets, p.dim)));
    // ... and, independently, a naive float64 sum's to rounding.
    const std::vector<double> naive =
        test::naive_reference(p, s.level, *s.domain, s.softening, c.prec, mask == Mask::all);
    const std::vector<double> naive_at = at_targets(naive, targets, p.dim);
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < naive_at.size(); ++i) {
      diff = std::max(diff, std::abs(sampled[i] - naive_at[i]));
      norm = std::max(norm, std::abs(naive_at[i]));
    }
    CHECK(diff <= 1e-12 * norm);

    auto m = make_method(k, s, p);
    m->prepare(p);
    std::vector<double> got;
    const KernelCheck check = check_method(*m, k, p, sampled, &got, &targets);
    // Expected: compare() on the targets' rows of the output and of the full reference (the
    // same values exactly); the momentum is the whole output's.
    const std::vector<double> masses = masses_as_seen(p, c.prec);
    const std::vector<double> got_at = at_targets(got, targets, p.dim), masses_at = at_targets(masses, targets, 1);
    const Metrics want = compare(got_at, at_targets(full, targets, p.dim), masses_at, p.dim);
    const Metrics whole = compare(got, full, masses, p.dim);
    const Metrics& have = check.metrics;
    CAPTURE(have.rel_l2);
    CAPTURE(want.rel_l2);
    CHECK(have.finite);
    CHECK(have.rel_l2 > 0);
    CHECK(have.rel_l2 == want.rel_l2);
    CHECK(have.p99_rel == want.p99_rel);
    CHECK(have.max_rel == want.max_rel);
    CHECK(have.momentum == whole.momentum);
    CHECK(have.rel_l2 != whole.rel_l2);  // the sample's rows are not the whole's
    // Against the naive reference: the same to rounding where the error is above rounding.
    const Metrics naive_want = compare(got_at, naive_at, masses_at, p.dim);
    if (have.rel_l2 > 1e-9) {
      CHECK(have.rel_l2 == doctest::Approx(naive_want.rel_l2).epsilon(1e-6));
      CHECK(have.p99_rel == doctest::Approx(naive_want.p99_rel).epsilon(1e-6));
      CHECK(have.max_rel == doctest::Approx(naive_want.max_rel).epsilon(1e-6));
    }
    // The same pass rule as the full validation.
    CHECK(check.repeatable);
    CHECK(check.pass == passes(have, tolerance(k, m->setup(), p.dim, p.size())));
    CHECK(check.pass);
  }
}

TEST_CASE("sampled validation: a non-finite value outside the sample still fails") {
  const Particles p = test::make("uniform", 2, 100, 3);
  std::vector<double> a(p.size() * 2, 1.0), ref(p.size() * 2, 1.0);
  const std::vector<std::size_t> targets = {1, 5, 9};
  const std::vector<double> ref_at = at_targets(ref, targets, 2);
  CHECK(compare_sample(a, ref_at, p.m, 2, targets).rel_l2 == 0.0);
  a[40 * 2 + 1] = NAN;  // particle 40, not sampled (poison_output's NaN where a kernel skipped one)
  const Metrics m = compare_sample(a, ref_at, p.m, 2, targets);
  CHECK(!m.finite);
  CHECK(std::isnan(m.rel_l2));
  CHECK(!passes(m, 1.0));
}

TEST_CASE("the metrics hold at accelerations and masses near float64's limits (no square under- or overflows)") {
  // Two particles in 2D: reference (1, 0), (0, 1); test (2, 0), (0, 1): rel_l2 = 1/sqrt(2), max_rel 1.
  for (const double scale : {1.0, 1e-170, 1e-300, 1e160, 1e300}) {
    CAPTURE(scale);
    const std::vector<double> ref = {scale, 0, 0, scale}, got = {2 * scale, 0, 0, scale};
    for (const double mass : {1.0, 1e-200, 1e200}) {
      const Metrics m = compare(got, ref, {mass, mass}, 2);
      CHECK(m.finite);
      CHECK(m.rel_l2 == doctest::Approx(1 / std::sqrt(2.0)).epsilon(1e-12));
      CHECK(m.max_rel == doctest::Approx(1.0).epsilon(1e-12));
      CHECK(m.momentum == doctest::Approx(std::sqrt(5.0) / 3).epsilon(1e-12));  // |(2, 1)| / (2 + 1)
    }
    // Opposite signs at 1e300: the difference 2e300 is still finite and the error 2.
    const Metrics flip = compare({-scale, 0, 0, scale}, ref, {1, 1}, 2);
    CHECK(flip.rel_l2 == doctest::Approx(std::sqrt(2.0)).epsilon(1e-12));
    CHECK(flip.max_rel == doctest::Approx(2.0).epsilon(1e-12));
  }
}

TEST_CASE("validate --sample: cpu-fmm passes on 200 targets of 20000; wrong methods fail; the sample column") {
  test::TempDir dir;
  // A near-field-only method registered as a full method: compared with every pair, it FAILs
  // beside cpu-fmm (order 4: its tolerance is 3x the model's error, 5e-3 in 3D).
  {
    KernelRegistration reg({"test-near-only-full", kFarField | kDeterministic | kDenseTree, "test only",
                            cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(test::cpu_serial_near_field))});
    const std::string csv = dir.file("full.csv");
    const auto r = test::run_cli({"validate", "--kernel", "cpu-fmm,test-near-only-full", "--dist", "plummer", "--dim",
                                  "3", "--n", "20000", "--level", "4", "--order", "4", "--precision", "float,double",
                                  "--sample", "200", "--output", csv});
    INFO(r.out);
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(r.out.find("some kernels FAIL") != std::string::npos);
    CHECK(r.out.find("cpu-allpairs --mask all, float64, at 200 sampled targets (--seed 1)") != std::string::npos);
    const auto rows = csv_rows(csv);
    REQUIRE(rows.size() == 5);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const auto& row = rows[i];
      CAPTURE(row[column(rows[0], "kernel")]);
      CHECK(row[column(rows[0], "sample")] == "200");
      CHECK(row[column(rows[0], "reference")].find("200 sampled targets") != std::string::npos);
      CHECK(row[column(rows[0], "status")] == (row[column(rows[0], "kernel")] == "cpu-fmm" ? "PASS" : "FAIL"));
    }
  }
  // Near-field kernels on a sample of their near-field reference: cpu-serial passes, a kernel
  // 1e-4 off everywhere fails; the seed fixes input and sample (the same metrics again).
  KernelRegistration reg({"test-slightly-strong", kNearField | kDeterministic | kDenseTree, "test only",
                          cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(slightly_strong))});
  const std::string csv = dir.file("near.csv");
  for (const char* seed : {"5", "5", "6"}) {
    const auto r = test::run_cli({"validate", "--kernel", "cpu-serial,test-slightly-strong", "--dist", "uniform",
                                  "--dim", "3", "--n", "20000", "--level", "4", "--sample", "300", "--seed", seed,
                                  "--output", csv});
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("cpu-allpairs --mask near, float64 on float32-rounded inputs, at 300 sampled targets") !=
          std::string::npos);
  }
  const auto rows = csv_rows(csv);
  REQUIRE(rows.size() == 7);
  const std::size_t rel_l2 = column(rows[0], "rel_l2");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    CHECK(rows[i][column(rows[0], "sample")] == "300");
    CHECK(rows[i][column(rows[0], "status")] == (i % 2 ? "PASS" : "FAIL"));
  }
  CHECK(rows[1][rel_l2] == rows[3][rel_l2]);  // seed 5 twice
  CHECK(rows[2][rel_l2] == rows[4][rel_l2]);
  CHECK(rows[1][rel_l2] != rows[5][rel_l2]);  // seed 6: another input and sample
}

TEST_CASE("validate --sample M >= N validates every particle, as without --sample; a bad M is refused") {
  test::TempDir dir;
  const std::vector<std::string> base = {"validate", "--kernel", "cpu-serial,cpu-fmm", "--dist", "clusters", "--dim",
                                         "2", "--n", "1500", "--level", "3"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return test::run_cli(args);
  };
  auto r = with({"--sample", "1500", "--output", dir.file("s.csv")});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("(every particle: --sample 1500 >= N)") != std::string::npos);
  CHECK(r.out.find("sampled targets (--seed") == std::string::npos);
  r = with({"--output", dir.file("f.csv")});
  REQUIRE(r.code == 0);
  const auto s = csv_rows(dir.file("s.csv")), f = csv_rows(dir.file("f.csv"));
  REQUIRE(s.size() == 3);
  REQUIRE(f.size() == 3);
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(s[i][column(s[0], "sample")].empty());
    CHECK(s[i][column(s[0], "rel_l2")] == f[i][column(f[0], "rel_l2")]);
    CHECK(s[i][column(s[0], "max_rel")] == f[i][column(f[0], "max_rel")]);
  }
  // One target fewer than N is a sample.
  r = with({"--sample", "1499"});
  CHECK(r.code == 0);
  CHECK(r.out.find("at 1499 sampled targets") != std::string::npos);

  for (const char* bad : {"--sample=0", "--sample=-3", "--sample=1.5", "--sample=abc", "--sample=", "--sample=10,20"}) {
    CAPTURE(bad);
    r = with({bad});
    CHECK(r.code == 2);
    CHECK(r.err.find("--sample") != std::string::npos);
    CHECK(r.out.find("PASS") == std::string::npos);  // refused before any work
  }
  // Experiments take `sample` for validation only.
  const std::string ini = dir.file("b.ini");
  test::write_text(ini, "mode = bench\nkernel = cpu-serial\ndist = uniform\nn = 200\nlevel = 2\nreps = 1\n");
  r = test::run_cli({"experiment", ini, "--sample", "10", "--output", dir.file("b.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("mode = validate") != std::string::npos);
}
