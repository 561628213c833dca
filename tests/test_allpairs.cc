// cpu-allpairs against the naive float64 loop of the tests, with both masks, and the forces
// command's output order and ids.
#include "io/csv_file.h"
#include "core/numbers.h"
#include "force_checks.h"

using namespace nf;

TEST_CASE("cpu-allpairs matches the naive float64 loop, all pairs and near field") {
  for (int dim : {2, 3})
    for (std::int64_t n : {0, 1, 2, 31, 257, 1200})
      for (Mask mask : {Mask::all, Mask::near})
        for (Precision prec : {Precision::f32, Precision::f64}) {
          const Particles p = test::make(n % 2 ? "plummer" : "uniform", dim, n, 40 + n);
          test::KernelCase c{"cpu-allpairs", prec, 3, 1e-3, mask, ""};
          // cpu-allpairs is float64 arithmetic on the inputs as seen: it must agree to rounding.
          const Metrics m = test::check_kernel(p, c);
          CHECK(m.rel_l2 < 1e-13);
        }
}

TEST_CASE("eps = 0 with coincident points gives finite forces; the pair contributes zero") {
  const Particles p = test::from_points(3, {{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0.25, 0.5, 0.5}});
  for (Mask mask : {Mask::all, Mask::near}) {
    test::KernelCase c{"cpu-allpairs", Precision::f64, 2, 0.0, mask, ""};
    test::check_kernel(p, c);
  }
  MethodSetup s;
  s.level = 2;
  s.domain = default_domain(p);
  s.softening = 0.0;
  s.precision = Precision::f64;
  const auto a = test::forces(find_kernel("cpu-allpairs"), p, s);
  // Particle 3 is pulled by the other three, at distance 0.25: a_x = (sum of masses) / 0.0625.
  CHECK(a[9] == doctest::Approx((p.m[0] + p.m[1] + p.m[2]) / 0.0625));
  // The coincident ones feel only particle 3.
  CHECK(a[0] == doctest::Approx(-p.m[3] / 0.0625));
}

TEST_CASE("forces writes one row per particle, in input order, with the input's ids") {
  test::TempDir dir;
  test::write_text(dir.file("p.csv"), "id,x,y,m\n70,0,0,1\n-3,1,0,2\n5,0.5,1,1\n");
  auto r = test::run_cli({"forces", "--input", dir.file("p.csv"), "--level", "1", "--kernel", "cpu-serial", "--precision",
                          "double", "--softening", "0", "--output", dir.file("a.csv")});
  REQUIRE(r.code == 0);
  const std::string text = test::read_text(dir.file("a.csv"));
  CHECK(text.rfind("id,ax,ay\n70,", 0) == 0);
  CHECK(text.find("\n-3,") != std::string::npos);
  CHECK(text.find("\n5,") != std::string::npos);
  // particle 70 at the origin: pulled towards (1,0) by mass 2 and towards (0.5,1) by mass 1
  const double ax = 2.0 + 0.5 / std::pow(1.25, 1.5), ay = 1.0 / std::pow(1.25, 1.5);
  const auto row = text.substr(text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n') - 1);
  double got_ax = 0, got_ay = 0;
  REQUIRE(nf::parse_double(row.substr(3, row.find(',', 3) - 3), got_ax));
  REQUIRE(nf::parse_double(row.substr(row.find(',', 3) + 1), got_ay));
  CHECK(got_ax == doctest::Approx(ax).epsilon(1e-14));
  CHECK(got_ay == doctest::Approx(ay).epsilon(1e-14));

  // Without ids: 0-based row numbers.
  test::write_text(dir.file("q.csv"), "x,y,z,m\n0,0,0,1\n1,1,1,1\n");
  r = test::run_cli({"forces", "--input", dir.file("q.csv"), "--level", "2", "--kernel", "cpu-allpairs", "--output",
                     dir.file("b.csv")});
  REQUIRE(r.code == 0);
  const std::string b = test::read_text(dir.file("b.csv"));
  CHECK(b.rfind("id,ax,ay,az\n0,", 0) == 0);
  CHECK(b.find("\n1,") != std::string::npos);
}

TEST_CASE("forces: bad input or a GPU kernel without a GPU fail cleanly and write nothing") {
  test::TempDir dir;
  test::write_text(dir.file("bad.csv"), "x,y,m\n0,0,1\n1,zz,1\n");
  auto r = test::run_cli({"forces", "--input", dir.file("bad.csv"), "--level", "1", "--kernel", "cpu-serial", "--output",
                          dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("bad.csv:3") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("a.csv")));
  r = test::run_cli({"forces", "--input", dir.file("bad.csv"), "--level", "1", "--kernel", "warp-drive", "--output",
                     dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown kernel 'warp-drive'") != std::string::npos);
  if (!gpu::available()) {
    test::write_text(dir.file("ok.csv"), "x,y,m\n0,0,1\n1,1,1\n");
    r = test::run_cli({"forces", "--input", dir.file("ok.csv"), "--level", "1", "--kernel", "bpb", "--output",
                       dir.file("a.csv")});
    CHECK(r.code == 2);
    CHECK(r.err.find("needs a CUDA GPU") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(dir.file("a.csv")));
  }
}
