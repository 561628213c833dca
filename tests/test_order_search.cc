// The measured order (measure/order_search.h, docs/design.md §16): the sampled error and its
// bound against the exact error of a known population, the search against independent float64
// all-pairs sums (the order taken reaches the accuracy, the order below does not), make_measured_method's
// refusals, and the commands' option and columns.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/errors.h"
#include "core/random.h"
#include "farfield/order.h"
#include "force_checks.h"
#include "measure/order_search.h"

using namespace nf;

using test::column;
using test::csv_rows;

namespace {

// ||a - ref|| / ||ref|| over every value: the definition, summed plainly.
double rel_l2(const std::vector<double>& a, const std::vector<double>& ref) {
  double e = 0, r = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e += (a[i] - ref[i]) * (a[i] - ref[i]), r += ref[i] * ref[i];
  return std::sqrt(e / r);
}

// Row 1's value of a column of a results file's rows.
std::string rows_at(const std::vector<std::vector<std::string>>& rows, const std::string& name) {
  return rows.at(1).at(column(rows.at(0), name));
}

std::vector<double> at_targets(const std::vector<double>& v, const std::vector<std::size_t>& targets, int dim) {
  std::vector<double> out;
  for (std::size_t t : targets)
    for (int d = 0; d < dim; ++d) out.push_back(v[t * dim + d]);
  return out;
}

// The accelerations of kernel k at order p on p (setup s otherwise).
std::vector<double> run_at(const KernelInfo& k, MethodSetup s, const Particles& p, int order) {
  s.order = order;
  s.order_sample = 0;
  auto m = make_method(k, s, p);
  m->prepare(p);
  m->evaluate();
  return m->accelerations();
}

}  // namespace

TEST_CASE("sampled_error: exact on the whole population, the ratio's own value, and the edge cases") {
  // Two targets in 2D, reference (1, 0), (0, 2), output (1.5, 0), (0, 2): ||e|| / ||ref|| = 0.5 / sqrt(5).
  const std::vector<double> ref = {1, 0, 0, 2}, a = {1.5, 0, 0, 2};
  const SampledError whole = sampled_error(a.data(), ref.data(), 2, 2, 2);
  CHECK(whole.rel_l2 == doctest::Approx(0.5 / std::sqrt(5.0)).epsilon(1e-14));
  CHECK(whole.bound == whole.rel_l2);  // every particle: nothing estimated
  CHECK(sampled_error(a.data(), ref.data(), 2, 2, 5).bound > whole.rel_l2);  // two of five: a margin
  // An error proportional to every reference: u = c^2 v exactly, no spread, bound = estimate.
  std::vector<double> r3, a3;
  Random rng(5);
  for (int i = 0; i < 300; ++i) {
    const double v = rng.normal() * std::exp(3 * rng.uniform());
    r3.push_back(v), a3.push_back(v * (1 + 3e-4));
  }
  const SampledError prop = sampled_error(a3.data(), r3.data(), 100, 3, 100000);
  CHECK(prop.rel_l2 == doctest::Approx(3e-4).epsilon(1e-9));
  CHECK(prop.bound == doctest::Approx(3e-4).epsilon(1e-9));
  // Scaled to float64's limits: the same ratios.
  for (double scale : {1e-300, 1e300}) {
    std::vector<double> rs = ref, as = a;
    for (double& v : rs) v *= scale;
    for (double& v : as) v *= scale;
    CHECK(sampled_error(as.data(), rs.data(), 2, 2, 2).rel_l2 == doctest::Approx(whole.rel_l2).epsilon(1e-12));
  }
  // One target of many: no spread to estimate, no bound.
  CHECK(std::isinf(sampled_error(a.data(), ref.data(), 1, 2, 10).bound));
  // Zeros: equal is 0, anything else infinite; non-finite is NaN; no targets is 0.
  const std::vector<double> zero = {0, 0};
  const std::vector<double> one = {1, 0};
  CHECK(sampled_error(zero.data(), zero.data(), 1, 2, 1).bound == 0.0);
  CHECK(std::isinf(sampled_error(one.data(), zero.data(), 1, 2, 1).rel_l2));
  const std::vector<double> bad = {NAN, 0};
  CHECK(std::isnan(sampled_error(bad.data(), one.data(), 1, 2, 1).bound));
  CHECK(sampled_error(nullptr, nullptr, 0, 3, 10).bound == 0.0);
}

TEST_CASE("sampled_error on a full method's errors: the bound covers the true error in 97% of samples of 4000, 90% of 1000") {
  // cpu-fmm at p = 10 in double on 3D Plummer and clusters of 20000 at level 5: the true relative L2
  // error over every particle against a naive float64 sum, then 200 samples of 4000 and of 1000 targets. The
  // errors are skewed (Plummer's centre carries much of the sum): the sampled estimate ranged over
  // 0.63x to 1.4x the truth; kOrderSearchZ = 3 covered it in 99.8% and 99.5% of 400 such samples
  // (z = 2: 97.5% both), and at 1000 targets in 93% and 99.3%.
  for (const char* dist : {"plummer", "clusters"}) {
    CAPTURE(dist);
    const Particles p = test::make(dist, 3, 20000, 3);
    MethodSetup s;
    s.level = 5;
    s.domain = default_domain(p);
    s.precision = Precision::f64;
    const std::vector<double> a = run_at(find_kernel("cpu-fmm"), s, p, 10);
    const std::vector<double> ref = test::naive_reference(p, 0, *s.domain, s.softening, Precision::f64, true);
    const double truth = rel_l2(a, ref);
    CAPTURE(truth);
    CHECK(truth > 1e-6);  // truncation, far above rounding: the samples measure something
    CHECK(sampled_error(a.data(), ref.data(), p.size(), 3, p.size()).bound == doctest::Approx(truth).epsilon(1e-9));
    for (const std::pair<std::size_t, double>& c : {std::pair<std::size_t, double>{4000, 0.97}, {1000, 0.90}}) {
    const std::size_t sample = c.first;
    const double least_share = c.second;
    CAPTURE(sample);
    int covered = 0;
    const int trials = 200;
    double low = 1e9, high = 0;
    for (int t = 0; t < trials; ++t) {
      const std::vector<std::size_t> targets = sample_targets(p.size(), sample, 700 + t);
      const std::vector<double> as = at_targets(a, targets, 3), rs = at_targets(ref, targets, 3);
      const SampledError e = sampled_error(as.data(), rs.data(), targets.size(), 3, p.size());
      CHECK(e.bound > e.rel_l2);
      covered += e.bound >= truth;
      low = std::min(low, e.rel_l2 / truth), high = std::max(high, e.bound / truth);
    }
    CAPTURE(covered);
    CAPTURE(low);
    CAPTURE(high);
    CHECK(covered >= int(least_share * trials));
    CHECK(low < 1.0);  // the estimate does vary: a fixed over-estimate would cover trivially
    CHECK(high < 2.5);  // and the bound is no blanket factor
    }
  }
}

TEST_CASE("search_order: the order taken reaches the accuracy on float64 all pairs, the order below does not") {
  struct Case {
    std::string kernel, dist;
    int dim, n, level;
    Precision prec;
    double accuracy;
    std::uint32_t sample;
  };
  // Every particle compared (M >= N: the bound is the exact error), and a sample of fewer.
  for (const Case& c : {Case{"cpu-fmm", "uniform", 3, 3000, 3, Precision::f64, 1e-4, 5000},
                        Case{"cpu-fmm-adaptive", "plummer", 3, 4000, 8, Precision::f64, 1e-4, 4000},
                        Case{"cpu-fmm", "clusters", 2, 5000, 5, Precision::f32, 1e-3, 600},
                        Case{"cpu-fmm-adaptive", "plummer", 3, 6000, 8, Precision::f32, 3e-4, 800}}) {
    CAPTURE(c.kernel);
    CAPTURE(c.dist);
    CAPTURE(c.sample);
    const Particles p = test::make(c.dist, c.dim, c.n, 23);
    const KernelInfo& k = find_kernel(c.kernel);
    MethodSetup s;
    s.level = c.level;
    s.domain = default_domain(p);
    s.precision = c.prec;
    s.accuracy = c.accuracy;
    s.order_sample = c.sample;
    if (k.adaptive()) s.leaf_size = 32;  // leaves of 32: a far field at these N
    const OrderSearch found = search_order(k, s, p);
    CAPTURE(found.describe(k.name));
    REQUIRE(found.reached);
    CHECK(found.accuracy == c.accuracy);
    CHECK(found.sample == std::min<std::size_t>(c.sample, p.size()));
    CHECK(found.ms >= found.reference_ms);
    // The trials: the order taken passed, and the one below it (when there is one) ran and failed.
    const auto trial = [&](int order) {
      return std::find_if(found.trials.begin(), found.trials.end(), [&](const OrderTrial& t) { return t.order == order; });
    };
    REQUIRE(trial(found.order) != found.trials.end());
    CHECK(trial(found.order)->pass);
    if (found.order > 1) {
      REQUIRE(trial(found.order - 1) != found.trials.end());
      CHECK(!trial(found.order - 1)->pass);
    }
    // Independently: a naive float64 sum over every pair, on the inputs the kernel sees.
    const std::vector<double> ref = test::naive_reference(p, 0, *s.domain, s.softening, c.prec, true);
    const double err = rel_l2(run_at(k, s, p, found.order), ref);
    CAPTURE(err);
    CHECK(err <= c.accuracy);
    if (c.sample >= std::size_t(c.n)) {  // exact: the bound is the error, and the order below misses
      CHECK(trial(found.order)->error.bound == doctest::Approx(err).epsilon(1e-6));
      if (found.order > 1) CHECK(rel_l2(run_at(k, s, p, found.order - 1), ref) > c.accuracy);
    }
    // make_measured_method runs the same search and makes the method at its order, held to the accuracy.
    auto m = make_measured_method(k, s, p);
    REQUIRE(m->order_search() != nullptr);
    CHECK(m->setup().order == found.order);
    CHECK(m->setup().accuracy == c.accuracy);
    CHECK(m->order_search()->order == found.order);
  }
}

TEST_CASE("search_order: on a Plummer sphere the measured order lies below the adaptive model's, which carries a shell's margin") {
  const Particles p = test::make("plummer", 3, 8000, 5);
  MethodSetup s;
  s.level = 8;
  s.leaf_size = 32;
  s.domain = default_domain(p);
  s.precision = Precision::f64;
  s.order_sample = 8000;
  const OrderSearch found = search_order(find_kernel("cpu-fmm-adaptive"), s, p);
  CAPTURE(found.describe("cpu-fmm-adaptive"));
  CHECK(found.accuracy == farfield::kDefaultAccuracy);  // none asked: the default
  CHECK(found.reached);
  CHECK(found.order < farfield::adaptive_order(3, farfield::kDefaultAccuracy, -1));
}

TEST_CASE("--order-sample: refused with --order and for kernels without a far field; empty input; no search without it") {
  const Particles p = test::make("uniform", 3, 500, 2);
  MethodSetup s;
  s.level = 2;
  s.domain = default_domain(p);
  s.order_sample = 100;
  s.order = 6;
  CHECK_THROWS_AS(make_measured_method(find_kernel("cpu-fmm"), s, p), UsageError);
  s.order = 0;
  CHECK_THROWS_AS(make_measured_method(find_kernel("cpu-serial"), s, p), UsageError);
  // make_method cannot measure (the search lies in a layer above it): it says so instead of
  // silently taking the model's order.
  CHECK_THROWS_AS(make_method(find_kernel("cpu-fmm"), s, p), std::logic_error);
  s.order_sample = 0;
  CHECK(make_measured_method(find_kernel("cpu-fmm"), s, p)->order_search() == nullptr);
  // No particles: nothing to measure, the table's order, no trial.
  s.order_sample = 10;
  Particles none;
  none.dim = 3;
  const OrderSearch empty = search_order(find_kernel("cpu-fmm"), s, none);
  CHECK(empty.trials.empty());
  CHECK(empty.order == farfield::order_for_accuracy(3, farfield::kDefaultAccuracy, 0, 0));
}

TEST_CASE("bench, validate and forces take --order-sample: the note, the columns, the refusals") {
  test::TempDir dir;
  const std::string bench = dir.file("bench.csv"), val = dir.file("validate.csv");
  const std::vector<std::string> input = {"--dist", "plummer", "--dim", "3", "--n", "3000", "--level", "3",
                                          "--accuracy", "1e-3"};
  auto with = [&](std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), input.begin(), input.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const auto b = test::run_cli(with({"bench", "--kernel", "cpu-fmm"},
                                    {"--order-sample", "400", "--reps", "1", "--warmup", "0", "--output", bench}));
  INFO(b.out);
  INFO(b.err);
  REQUIRE(b.code == 0);
  CHECK(b.out.find("cpu-fmm: order ") != std::string::npos);
  CHECK(b.out.find("measured at 400 sampled targets") != std::string::npos);
  const auto rows = csv_rows(bench);
  REQUIRE(rows.size() == 2);
  CHECK(rows_at(rows, "order_sample") == "400");
  CHECK(rows_at(rows, "order") == "auto");
  CHECK(std::stod(rows_at(rows, "order_search_ms")) > 0);
  const int p = std::stoi(rows_at(rows, "p"));
  CHECK(p >= 1);

  const auto v = test::run_cli(with({"validate", "--kernel", "cpu-fmm"}, {"--order-sample", "400", "--output", val}));
  INFO(v.out);
  CHECK(v.code == 0);
  const auto vrows = csv_rows(val);
  REQUIRE(vrows.size() == 2);
  CHECK(rows_at(vrows, "p") == std::to_string(p));  // the same input, targets and search: the same order
  CHECK(std::stod(rows_at(vrows, "tolerance")) == 1e-3);  // held to the accuracy it was chosen for
  CHECK(rows_at(vrows, "status") == "PASS");

  const auto f = test::run_cli(with({"forces", "--kernel", "cpu-fmm"}, {"--order-sample", "400", "--output", dir.file("acc.csv")}));
  INFO(f.err);
  CHECK(f.code == 0);
  CHECK(f.out.find("cpu-fmm: order " + std::to_string(p)) != std::string::npos);

  // Refused before any work: with --order, and where no kernel has a far field.
  const auto both = test::run_cli(with({"bench", "--kernel", "cpu-fmm"}, {"--order", "6", "--order-sample", "400"}));
  CHECK(both.code != 0);
  CHECK(both.err.find("--order-sample chooses the order") != std::string::npos);
  const auto near = test::run_cli({"bench", "--kernel", "cpu-serial", "--n", "100", "--level", "2", "--order-sample", "10"});
  CHECK(near.code != 0);
  CHECK(near.err.find("--order-sample") != std::string::npos);
  const auto fboth = test::run_cli(with({"forces", "--kernel", "cpu-fmm"}, {"--order", "6", "--order-sample", "400",
                                                                            "--output", dir.file("no.csv")}));
  CHECK(fboth.code != 0);
  CHECK(fboth.err.find("--order-sample chooses the order") != std::string::npos);
}

TEST_CASE("simulate --order-sample: measured once on step 0, recorded in run.ini, kept by a resumed run") {
  test::TempDir dir;
  const std::string run = dir.file("run");
  const std::vector<std::string> args = {"simulate", "--kernel", "cpu-fmm", "--dist", "plummer", "--dim", "3",
                                         "--n", "2000", "--level", "3", "--dt", "1e-3", "--softening", "1e-2",
                                         "--order-sample", "300", "--accuracy", "1e-3", "--snapshot-every", "2",
                                         "--output-dir", run};
  std::vector<std::string> first = args;
  first.insert(first.end(), {"--steps", "2"});
  const auto a = test::run_cli(first);
  INFO(a.err);
  REQUIRE(a.code == 0);
  const auto at = a.out.find("cpu-fmm: order ");
  REQUIRE(at != std::string::npos);
  CHECK(a.out.find("measured at 300 sampled targets") != std::string::npos);
  const int order = std::stoi(a.out.substr(at + 15));
  std::ifstream ini(run + "/run.ini");
  const std::string text((std::istreambuf_iterator<char>(ini)), std::istreambuf_iterator<char>());
  CHECK(text.find("order_sample = 300") != std::string::npos);
  CHECK(text.find("order_used = " + std::to_string(order)) != std::string::npos);
  std::vector<std::string> more = args;
  more.insert(more.end(), {"--steps", "4", "--resume"});
  const auto b = test::run_cli(more);
  INFO(b.err);
  CHECK(b.code == 0);
  const std::string said = b.out + b.err;
  CHECK(said.find("resuming at order " + std::to_string(order)) != std::string::npos);
  CHECK(said.find("measured at") == std::string::npos);  // no second search
  // Another --order-sample is another run: refused, naming the setting.
  std::vector<std::string> other = args;
  *std::find(other.begin(), other.end(), "300") = "400";
  other.insert(other.end(), {"--steps", "6", "--resume"});
  const auto c = test::run_cli(other);
  CHECK(c.code != 0);
  CHECK(c.err.find("--order-sample") != std::string::npos);
}

TEST_CASE("search_order: an error that does not fall with the order stops the climb; the least bound runs; M = 1 is refused") {
  KernelRegistration reg({"test-near-only-full", kFarField | kDeterministic | kDenseTree, "test only",
                          cpu_near_field(CpuNearFieldKernels NF_PER_SHAPE(test::cpu_serial_near_field))});
  const Particles p = test::make("plummer", 3, 3000, 4);
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(p);
  s.order_sample = 500;
  const OrderSearch found = search_order(find_kernel("test-near-only-full"), s, p);
  CAPTURE(found.describe("test-near-only-full"));
  CHECK(!found.reached);
  REQUIRE(found.trials.size() == 3);  // the table's order, then two more whose bound did not fall
  CHECK(found.trials[1].order == found.trials[0].order + 1);
  CHECK(found.stopped.find("the bound stopped falling") != std::string::npos);
  CHECK(found.describe("x").find("validate may fail it") != std::string::npos);
  double least = found.trials[0].error.bound;
  for (const OrderTrial& t : found.trials) {
    least = std::min(least, t.error.bound);
    CHECK(!t.pass);
  }
  for (const OrderTrial& t : found.trials)
    if (t.order == found.order) CHECK(t.error.bound == least);
  // One target cannot bound anything: refused, from the command line and the library alike.
  s.order_sample = 1;
  CHECK_THROWS_AS(make_measured_method(find_kernel("cpu-fmm"), s, p), UsageError);
  const auto r = test::run_cli({"forces", "--kernel", "cpu-fmm", "--n", "100", "--level", "2", "--order-sample", "1",
                                "--output", "/dev/null"});
  CHECK(r.code != 0);
  CHECK(r.err.find("--order-sample 1") != std::string::npos);
  // No far field (leaf level 1): nothing measured, the table's order.
  s.order_sample = 100;
  s.level = 1;
  const OrderSearch none = search_order(find_kernel("cpu-fmm"), s, p);
  CHECK(none.trials.empty());
  CHECK(none.stopped == "no far field at leaf level 1");
  CHECK(none.describe("cpu-fmm").find("nothing measured") != std::string::npos);
}
