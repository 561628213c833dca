// The far field's error model on sparse trees (farfield/order.h: sparse_factor): few particles
// over a deep leaf level err more than the table in 3D, so the order chosen for an accuracy grows
// with N^2 / 8^level below kSparseScale, validate holds an explicit order to the table times that
// factor, and an accuracy the highest order cannot reach there is refused, naming the particles.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/errors.h"
#include "farfield/order.h"
#include "helpers.h"
#include "measure/validation.h"
#include "methods/force_method.h"
#include "methods/registry.h"
#include "tree/box_rule.h"

namespace ff = nf::farfield;

TEST_CASE("the sparse factor: 1 from N^2 / 8^level = kSparseScale up and in 2D, (scale / x)^slope below") {
  CHECK(ff::sparse_factor(3, 0, 9) == 1.0);             // particles not known
  CHECK(ff::sparse_factor(2, 2048, 9) == 1.0);          // 2D: within the table at the same N and boxes
  CHECK(ff::sparse_factor(3, 2048, 1) == 1.0);          // no far field
  CHECK(ff::sparse_factor(3, 1 << 20, 5) == 1.0);       // the calibration: x = 2^25
  CHECK(ff::sparse_factor(3, 1 << 24, 6) == 1.0);       // the speed target's level: x = 2^30
  const double x = 2048.0 * 2048.0 / 4096.0;            // N = 2048 at level 4: x = 1024
  CHECK(ff::sparse_factor(3, 2048, 4) == doctest::Approx(std::pow(ff::kSparseScale / x, ff::kSparseSlope)));
  CHECK(ff::sparse_factor(3, 2048, 4) > 2.31);          // measured 2.31x the table at p = 8 (double)
  for (int level = 2; level < 12; ++level) {
    CAPTURE(level);
    CHECK(ff::sparse_factor(3, 20000, level + 1) >= ff::sparse_factor(3, 20000, level));
    CHECK(ff::sparse_factor(3, 2048, level) >= ff::sparse_factor(3, 20000, level));
    CHECK(ff::error_factor(3, level, 20000) >= ff::depth_factor(3, level));
  }
  // The order at the default accuracy: p = 10 for many particles, 13 for 2048 at level 4 (3.0x).
  CHECK(ff::order_for_accuracy(3, 1e-4, 4, 0) == 10);
  CHECK(ff::order_for_accuracy(3, 1e-4, 4, 1e6) == 10);
  CHECK(ff::order_for_accuracy(3, 1e-4, 4, 2048) == 13);
  CHECK(ff::order_for_accuracy(2, 1e-4, 5, 2048) == ff::order_for_accuracy(2, 1e-4, 5, 0));
}

TEST_CASE("validate: cpu-fmm on a sparse 3D tree reaches the default accuracy; an explicit order's tolerance") {
  // 3D uniform, N = 2048 at level 4 (half a particle a box): the table's p = 10 erred 1.76e-4 at
  // the default 1e-4 (a FAIL); the sparse factor takes p = 13.
  nf::test::TempDir dir;
  const auto run = [&](const std::string& level, const std::string& order, const std::string& file) {
    const nf::test::CliResult r = nf::test::run_cli({"validate", "--dist", "uniform", "--dim", "3", "--n", "2048",
                                                     "--seed", "1", "--kernel", "cpu-fmm", "--level", level,
                                                     "--precision", "double", "--order", order, "--output",
                                                     dir.file(file)});
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    const auto rows = nf::test::csv_rows(dir.file(file));
    REQUIRE(rows.size() == 2);
    return rows;
  };
  const auto a = run("4", "0", "auto.csv");
  CHECK(std::stoi(a[1][nf::test::column(a[0], "p")]) == 13);
  CHECK(std::stod(a[1][nf::test::column(a[0], "rel_l2")]) <= 1e-4);
  // --order 8 at level 5 (x = 128) erred 3.6x the table, past the 3x an explicit order had been
  // held to; the tolerance now carries the factor (5.0x at this x).
  const auto e = run("5", "8", "explicit.csv");
  const double err = std::stod(e[1][nf::test::column(e[0], "rel_l2")]);
  CHECK(err > 3.0 * ff::error_model(3).error(8));
  CHECK(err <= 3.0 * ff::error_model(3).error(8) * ff::sparse_factor(3, 2048, 5));
  nf::MethodSetup s;
  s.order = 8;
  s.level = 5;
  CHECK(nf::tolerance(nf::find_kernel("cpu-fmm"), s, 3, 2048) ==
        doctest::Approx(3.0 * ff::error_model(3).error(8) * ff::sparse_factor(3, 2048, 5)));
}

TEST_CASE("an accuracy the highest order cannot reach on a sparse tree is refused, naming the particles") {
  // 3D, level 7: 1.92e-6 for many particles (depth factor 1), 1.56e-5 for 5000 (the sparse factor's
  // largest, 8.1, at x = kSparseLeastX: 5000^2 / 8^7 = 11.9 is below it).
  CHECK_NOTHROW(nf::check_accuracy_reachable(3, 7, 5e-6, false, 0));
  CHECK_NOTHROW(nf::check_accuracy_reachable(3, 7, 5e-6, false, 100000000));
  try {
    nf::check_accuracy_reachable(3, 7, 5e-6, false, 5000);
    FAIL("not refused");
  } catch (const nf::UsageError& e) {
    CHECK(std::string(e.what()).find("5000 particles") != std::string::npos);
  }
  CHECK_NOTHROW(nf::check_accuracy_reachable(3, 7, 2e-5, false, 5000));
  // The factor stops at the least x measured: one particle at level 3 had been refused 1e-4.
  CHECK(ff::sparse_factor(3, 1, 3) == doctest::Approx(std::pow(ff::kSparseScale / ff::kSparseLeastX, ff::kSparseSlope)));
  CHECK(ff::sparse_factor(3, 1, 12) == ff::sparse_factor(3, 1, 3));
  CHECK(ff::sparse_factor(3, 100, 3) < 8.1);  // measured 8.05x at N = 100, level 3 (x = 19.5)
  for (int level = 2; level <= nf::max_level(3); ++level) {
    CAPTURE(level);
    CHECK_NOTHROW(nf::check_accuracy_reachable(3, level, ff::kDefaultAccuracy, false, 1));
  }
}

TEST_CASE("a sweep refuses a point whose particles the accuracy cannot reach before its first point") {
  // 3D uniform of 5000: level 2 reaches 5e-6 at order 20 (1.92e-6), level 7 does not (1.75e-5);
  // the sweep had run level 2 and stopped at level 7.
  nf::test::TempDir dir;
  const nf::test::CliResult r =
      nf::test::run_cli({"validate", "--dist", "uniform", "--dim", "3", "--n", "5000", "--kernel", "cpu-fmm",
                         "--level", "2,7", "--accuracy", "5e-6", "--output", dir.file("v.csv")});
  INFO(r.out << r.err);
  CHECK(r.code != 0);
  CHECK(r.err.find("5000 particles") != std::string::npos);
  CHECK(r.err.find("leaf level 7") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("v.csv")));
  // The same from a file, its particles known once it is read: refused before level 2 runs.
  REQUIRE(nf::test::run_cli({"generate", "--dist", "uniform", "--dim", "3", "--n", "5000", "--output",
                             dir.file("in.csv")}).code == 0);
  const nf::test::CliResult f = nf::test::run_cli({"validate", "--input", dir.file("in.csv"), "--kernel", "cpu-fmm",
                                                   "--level", "2,7", "--accuracy", "5e-6", "--output",
                                                   dir.file("f.csv")});
  INFO(f.out << f.err);
  CHECK(f.code != 0);
  CHECK(f.err.find("5000 particles") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("f.csv")));
}
