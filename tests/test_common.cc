// Particles, CSV input/output, exact number conversion, domains and generators.
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "io/atomic_file.h"
#include "tree/box_rule.h"
#include "io/csv_file.h"
#include "tree/domain.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "helpers.h"
#include "tree/tree.h"

using namespace nf;
using nf::test::TempDir;
using nf::test::write_text;

namespace {
std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The InputError message of reading `text` as a CSV file (empty if it reads fine).
std::string read_error(const std::string& text) {
  TempDir dir;
  const std::string path = dir.file("in.csv");
  write_text(path, text);
  try {
    read_particles_csv(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("decimal text converts to the nearest double, and doubles round-trip") {
  double v = 0;
  REQUIRE(parse_double("0.1", v));
  CHECK(bits(v) == bits(0.1));
  REQUIRE(parse_double("0.0625", v));
  CHECK(v == 0.0625);
  // 17 significant digits written by other tools (numpy repr, printf %.17g).
  REQUIRE(parse_double("0.30744451823034274", v));
  CHECK(bits(v) == bits(0.30744451823034274));
  REQUIRE(parse_double("1.0000000000000002", v));
  CHECK(v == 1.0 + std::numeric_limits<double>::epsilon());
  REQUIRE(parse_double("2.2250738585072014e-308", v));
  CHECK(v == std::numeric_limits<double>::min());
  REQUIRE(parse_double("4.9406564584124654e-324", v));
  CHECK(v == std::numeric_limits<double>::denorm_min());
  REQUIRE(parse_double(" +1e3 ", v));
  CHECK(v == 1000.0);
  // A value exactly halfway between two doubles rounds to even (digit-by-digit parsers miss it).
  REQUIRE(parse_double("9007199254740993", v));
  CHECK(v == 9007199254740992.0);
  CHECK_FALSE(parse_double("", v));
  CHECK_FALSE(parse_double("1.5x", v));
  CHECK_FALSE(parse_double("abc", v));
  CHECK_FALSE(parse_double("1e999", v));
  // Why a number did not parse, in the words of the error messages.
  CHECK(parse_failure("1e999", false) == "is out of range");
  CHECK(parse_failure("-1e999", false) == "is out of range");
  CHECK(parse_failure("1.5x", false) == "is not a number");
  CHECK(parse_failure(" ", false) == "is empty");
  CHECK(parse_failure("99999999999999999999", true) == "is out of range");
  CHECK(parse_failure("4.5", true) == "is not an integer");

  nf::Random r(11);
  for (int k = 0; k < 20000; ++k) {
    std::uint64_t b = (static_cast<std::uint64_t>(r.below(1ull << 32)) << 32) | r.below(1ull << 32);
    double d;
    std::memcpy(&d, &b, sizeof d);
    if (!std::isfinite(d)) continue;
    double back = 0;
    REQUIRE(parse_double(format_double(d), back));
    CHECK(bits(back) == bits(d));
  }
}

TEST_CASE("CSV particles: 2D and 3D headers, optional and ignored columns") {
  TempDir dir;
  SUBCASE("2D with m, extra columns ignored, CRLF and blanks") {
    write_text(dir.file("a.csv"), "name,x, y ,m,colour\r\np,0.1,0.2,1.5,red\r\nq,1e-3,-2,0,blue\r\n");
    const Particles p = read_particles_csv(dir.file("a.csv"));
    REQUIRE(p.size() == 2);
    CHECK(p.dim == 2);
    CHECK(p.x[0] == 0.1);
    CHECK(p.y[1] == -2.0);
    CHECK(p.m[0] == 1.5);
    CHECK(p.m[1] == 0.0);
    CHECK(p.id.empty());
    CHECK(p.id_of(1) == 1);
  }
  SUBCASE("3D with mass, ids and velocities in any column order") {
    write_text(dir.file("b.csv"), "id,mass,z,y,x,vx,vy,vz\n17,2,3,2,1,0.5,0.25,0.125\n-4,1,0,0,0,0,0,0\n");
    const Particles p = read_particles_csv(dir.file("b.csv"));
    REQUIRE(p.size() == 2);
    CHECK(p.dim == 3);
    CHECK(p.x[0] == 1.0);
    CHECK(p.y[0] == 2.0);
    CHECK(p.z[0] == 3.0);
    CHECK(p.m[0] == 2.0);
    CHECK(p.id_of(0) == 17);
    CHECK(p.id_of(1) == -4);
    CHECK(p.vz[0] == 0.125);
  }
  SUBCASE("a header and no rows is a valid empty input") {
    write_text(dir.file("c.csv"), "x,y,m\n");
    CHECK(read_particles_csv(dir.file("c.csv")).size() == 0);
  }
}

TEST_CASE("CSV errors name the file, the line and the problem") {
  auto has = [](const std::string& msg, const std::string& what) {
    INFO(msg);
    CHECK(msg.find(what) != std::string::npos);
  };
  has(read_error(""), "empty file");
  has(read_error("x,m\n1,2\n"), "missing column 'y'");
  has(read_error("x,y\n1,2\n"), "missing column 'm'");
  has(read_error("x,y,m,mass\n1,2,3,4\n"), "both 'm' and 'mass'");
  const std::string bad = read_error("x,y,m\n1,2,3\n4,oops,6\n");
  has(bad, "in.csv:3");
  has(bad, "'oops' is not a number");
  has(read_error("x,y,m\n1,nan,1\n"), "not finite");
  has(read_error("x,y,m\n1,2,inf\n"), "not finite");
  has(read_error("x,y,m\n1,2,-1\n"), "negative mass");
  has(read_error("x,y,m\n1,2,3\n1,2\n"), "in.csv:3: too few fields");
  has(read_error("x,y,m\n1,2,\n"), "empty");
  has(read_error("x,y,m,id\n1,2,3,4.5\n"), "not an integer");
  has(read_error("x,y,z,m,vx\n1,2,3,4,5\n"), "vx, vy, vz");
  try {
    read_particles_csv("/nonexistent/dir/p.csv");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cannot open") != std::string::npos);
  }
}

TEST_CASE("CSV: blank lines are skipped (LF and CRLF, trailing too); line numbers stay the file's") {
  for (const char* text : {"x,y,m\n1,2,3\n\n", "x,y,m\r\n1,2,3\r\n\r\n", "x,y,m\n1,2,3\n \t\n",
                           "\nx,y,m\n\n1,2,3\n", "x,y,m\r\n\r\n1,2,3\r\n \r\n\r\n", "x,y,m\n1,2,3"}) {
    CAPTURE(text);
    TempDir dir;
    write_text(dir.file("in.csv"), text);
    Particles p;
    CHECK_NOTHROW(p = read_particles_csv(dir.file("in.csv")));
    CHECK(p.size() == 1);
    CHECK(p.m[0] == 3.0);
  }
  // Errors after blank lines point at the physical line.
  CHECK(read_error("x,y,m\n\n\n1,oops,3\n").find("in.csv:4: column 'y'") != std::string::npos);
  CHECK(read_error("\n\nx,y,m,x\n1,2,3,4\n").find("in.csv:3: column 'x' appears twice") != std::string::npos);
  CHECK(read_error("\n \n\r\n").find("no header row") != std::string::npos);
}

TEST_CASE("CSV: every input error reads file:line: problem in the project's words") {
  // (text, line, problem): the parser's own cases (short and long rows, duplicated header names,
  // open quotes), out-of-range numbers and repeated ids.
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"x,y,m\n1,2,3\n1,2\n", 3, "too few fields"},
      {"x,y,m\n1,2,3,4\n", 2, "more fields than the header has columns"},
      {"x,y,m,y\n1,2,3,4\n", 1, "column 'y' appears twice in the header"},
      {"x,y,m\n1,\"2,3\n", 2, "a quoted field is not closed"},
      {"x,y,m\n1e999,2,3\n", 2, "column 'x': '1e999' is out of range"},
      {"x,y,m,id\n1,2,3,99999999999999999999\n", 2, "column 'id': '99999999999999999999' is out of range"},
      {"x,y,m,id\n0,0,1,5\n1,1,1,6\n\n2,2,1,5\n", 5, "id 5 is already the id of line 2"},
      {"x,y,m\n1,2,-0.5\n", 2, "column 'm': negative mass -0.5"},
      {"\n\nx,m\n1,2\n", 3, "missing column 'y'"},
  };
  for (const auto& [text, line, problem] : cases) {
    CAPTURE(text);
    TempDir dir;
    const std::string path = dir.file("in.csv");
    write_text(path, text);
    std::string msg;
    try {
      read_particles_csv(path);
    } catch (const InputError& e) {
      msg = e.what();
    }
    CHECK(msg.rfind(path + ":" + std::to_string(line) + ": " + problem, 0) == 0);
    // Nothing of the CSV library's own wording ("Too few columns in line 3 in file \"...\".").
    CHECK(msg.find('"') == std::string::npos);
    CHECK(msg.find("in file") == std::string::npos);
  }
}

TEST_CASE("acceleration files read back as forces writes them, with the same error wording") {
  TempDir dir;
  Particles p = test::make("uniform", 3, 5);
  p.id = {4, 0, -2, 7, 9};
  std::vector<double> acc(15);
  for (std::size_t k = 0; k < acc.size(); ++k) acc[k] = 0.1 * static_cast<double>(k) - 0.7;
  write_accelerations_csv(dir.file("a.csv"), p, acc);
  const Accelerations a = read_accelerations_csv(dir.file("a.csv"));
  CHECK(a.dim == 3);
  CHECK(a.id == p.id);
  CHECK(a.acc == acc);
  write_text(dir.file("b.csv"), "id,ax,ay\n1,0,0\n1,2,3\n");
  CHECK_THROWS_WITH_AS(read_accelerations_csv(dir.file("b.csv")), (dir.file("b.csv") + ":3: id 1 is already the id of line 2").c_str(),
                       InputError);
  write_text(dir.file("c.csv"), "id,ax\n1,0\n");
  CHECK_THROWS_WITH_AS(read_accelerations_csv(dir.file("c.csv")), (dir.file("c.csv") + ":1: missing column 'ay' in the header").c_str(),
                       InputError);
}

TEST_CASE("particle files round-trip bit for bit") {
  TempDir dir;
  for (int dim : {2, 3}) {
    Particles p = test::make("plummer", dim, 1000, 5);
    p.id.resize(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) p.id[i] = static_cast<std::int64_t>(3 * i) - 7;
    write_particles_csv(dir.file("p.csv"), p);
    const Particles q = read_particles_csv(dir.file("p.csv"));
    REQUIRE(q.size() == p.size());
    CHECK(q.dim == dim);
    for (std::size_t i = 0; i < p.size(); ++i) {
      CHECK(bits(q.x[i]) == bits(p.x[i]));
      CHECK(bits(q.y[i]) == bits(p.y[i]));
      if (dim == 3) CHECK(bits(q.z[i]) == bits(p.z[i]));
      CHECK(bits(q.m[i]) == bits(p.m[i]));
      CHECK(bits(q.vx[i]) == bits(p.vx[i]));
      CHECK(q.id[i] == p.id[i]);
    }
  }
}

TEST_CASE("outputs are written under a temporary name and appear only when complete") {
  TempDir dir;
  const std::string path = dir.file("out.csv");
  {
    AtomicFile f(path);
    f.write("partial");
    CHECK_FALSE(std::filesystem::exists(path));
  }  // destroyed without commit
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()) == 0);
  write_file_atomically(path, "complete\n");
  CHECK(test::read_text(path) == "complete\n");

  // A folder that does not exist is the user's input error, named as the user wrote it.
  const std::string missing = dir.file("no/such/folder/out.csv");
  try {
    AtomicFile f(missing);
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.rfind(missing + ": ", 0) == 0);
    CHECK(msg.find("does not exist") != std::string::npos);
    CHECK(msg.find(".tmp.") == std::string::npos);
  }
  CHECK_THROWS_AS(check_output_path(dir.path().string()), InputError);  // a folder, not a file
  CHECK_NOTHROW(check_output_path(dir.file("fine.csv")));
  CHECK_NOTHROW(check_output_path("relative-name.csv"));
}

TEST_CASE("default and explicit domains") {
  const Particles p = test::from_points(2, {{0.5, -1.0}, {2.5, 0.0}, {1.0, 3.0}});
  const Domain d = default_domain(p);
  CHECK(d.origin[0] == 0.5);
  CHECK(d.origin[1] == -1.0);
  CHECK(d.side == 4.0);  // the larger extent (y: 4, x: 2)

  // Zero extent: one particle, or all coincident.
  CHECK(default_domain(test::from_points(3, {{2, 2, 2}})).side == 1.0);
  CHECK(default_domain(test::from_points(2, {{1, 1}, {1, 1}, {1, 1}})).side == 1.0);
  CHECK(default_domain(Particles{}).side == 1.0);

  const Domain e = parse_domain("0,-1,10", 2);
  CHECK(e.origin[1] == -1.0);
  CHECK(e.side == 10.0);
  CHECK_THROWS_AS(parse_domain("0,0,1", 3), InputError);
  CHECK_THROWS_AS(parse_domain("0,0,-1", 2), InputError);
  CHECK_THROWS_AS(parse_domain("0,x,1", 2), InputError);
  check_inside(p, parse_domain("0,-1,4", 2), "p.csv");  // upper faces are inside
  try {
    check_inside(p, parse_domain("0,0,4", 2), "p.csv");
    FAIL("no error");
  } catch (const InputError& err) {
    const std::string msg = err.what();
    CHECK(msg.find("p.csv") != std::string::npos);
    CHECK(msg.find("row 1") != std::string::npos);
    CHECK(msg.find("y = -1") != std::string::npos);
  }
}

TEST_CASE("box rule: faces belong to the upper box, the domain's upper face to the last box") {
  for (int level : {0, 1, 3, 7, 14, 21, 31}) {
    const std::uint32_t n = 1u << level;
    CHECK(box_coordinate(0.0, 0.0, 1.0, level) == 0);
    CHECK(box_coordinate(1.0, 0.0, 1.0, level) == n - 1);
    for (std::uint32_t c = 0; c < n; c += std::max(1u, n / 64)) {
      const double face = static_cast<double>(c) / n;  // exact: n is a power of two
      CHECK(box_coordinate(face, 0.0, 1.0, level) == c);
      if (c > 0) CHECK(box_coordinate(std::nextafter(face, 0.0), 0.0, 1.0, level) == c - 1);
    }
  }
  CHECK(box_coordinate(-3.0, -3.0, 6.0, 2) == 0);
  CHECK(box_coordinate(3.0, -3.0, 6.0, 2) == 3);
  CHECK(box_coordinate(0.0, -3.0, 6.0, 2) == 2);
}

TEST_CASE("generators are seeded, reproducible and documented") {
  for (const char* dist : {"uniform", "plummer", "clusters"})
    for (int dim : {2, 3}) {
      CAPTURE(dist);
      CAPTURE(dim);
      const Particles a = test::make(dist, dim, 501, 9), b = test::make(dist, dim, 501, 9), c = test::make(dist, dim, 501, 10);
      REQUIRE(a.size() == 501);
      CHECK(a.x == b.x);
      CHECK(a.m == b.m);
      CHECK(a.x != c.x);
      for (double m : a.m) CHECK((m >= 0.5 / 501 && m < 1.5 / 501));
    }
  GenerateOptions g;
  g.dist = "plummer";
  g.dim = 3;
  g.n = 4000;
  const Particles p = generate(g);
  double total = 0, r_max = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    total += p.m[i];
    r_max = std::max(r_max, std::sqrt(p.x[i] * p.x[i] + p.y[i] * p.y[i] + p.z[i] * p.z[i]));
  }
  CHECK(total == doctest::Approx(1.0));
  CHECK(r_max <= 10.0 * 3.0 * M_PI / 16.0);
  CHECK(p.has_velocities());
}

TEST_CASE("uniform-exact: exactly P per box over the default domain [0,1]^D, rows shuffled") {
  for (int dim : {2, 3})
    for (int level : {0, 1, 3}) {
      const std::int64_t ppb = 5;
      const Particles p = test::make_exact(dim, level, ppb);
      const std::int64_t nbox = std::int64_t(1) << (dim * level);
      REQUIRE(static_cast<std::int64_t>(p.size()) == nbox * ppb);
      const Domain d = default_domain(p);
      CHECK(d.side == 1.0);
      CHECK(d.origin[0] == 0.0);
      std::vector<int> count(static_cast<std::size_t>(nbox), 0);
      const std::uint32_t n = 1u << level;
      std::int64_t in_order = 0;
      for (std::size_t i = 0; i < p.size(); ++i) {
        std::uint32_t c[3] = {box_coordinate(p.x[i], 0, 1, level), box_coordinate(p.y[i], 0, 1, level),
                              dim == 3 ? box_coordinate(p.z[i], 0, 1, level) : 0};
        const std::uint32_t row_major = c[0] + n * (c[1] + n * c[2]);
        ++count[row_major];
        in_order += static_cast<std::int64_t>(row_major) == static_cast<std::int64_t>(i) / ppb;
      }
      for (int c : count) CHECK(c == ppb);
      if (nbox > 1) CHECK(in_order < static_cast<std::int64_t>(p.size()));
    }
}

TEST_CASE("lattice and bad generator options") {
  GenerateOptions g;
  g.dist = "lattice";
  g.dim = 2;
  g.n = 49;
  const Particles p = generate(g);
  CHECK(p.size() == 49);
  CHECK(p.x[8] == 1.0 / 7.0);
  g.n = 50;
  CHECK_THROWS_AS(generate(g), UsageError);
  g.n = 8;
  g.dim = 3;
  CHECK(generate(g).size() == 8);
  g.dist = "spiral";
  CHECK_THROWS_AS(generate(g), UsageError);
  g.dist = "uniform";
  g.dim = 4;
  CHECK_THROWS_AS(generate(g), UsageError);
  g.dim = 2;
  g.n = 10;
  g.level = 2;
  g.ppb = 3;
  CHECK_THROWS_AS(generate(g), UsageError);  // both --n and --level/--ppb
  g.n = -1;
  g.level = 20;
  CHECK_THROWS_AS(generate(g), UsageError);
}

TEST_CASE("generate command writes a file that reads back") {
  TempDir dir;
  const auto r = test::run_cli({"generate", "--dist", "uniform-exact", "--dim", "3", "--level", "1", "--ppb", "3",
                                "--output", dir.file("g.csv")});
  CHECK(r.code == 0);
  CHECK(read_particles_csv(dir.file("g.csv")).size() == 24);
  const auto bad = test::run_cli({"generate", "--dist", "nope", "--n", "3", "--output", dir.file("h.csv")});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown distribution") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("h.csv")));
}

TEST_CASE("generate refuses nonsense instead of ignoring it") {
  TempDir dir;
  const std::string out = dir.file("g.csv");
  auto r = test::run_cli({"generate", "--n", "1000", "--ppb", "4", "--level", "2", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--n and --ppb exclude each other") != std::string::npos);
  r = test::run_cli({"generate", "--ppb", "-1", "--level", "2", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--ppb: -1 is not a valid value") != std::string::npos);
  r = test::run_cli({"generate", "--ppb", "0", "--level", "2", "--output", out});
  CHECK(r.code == 2);
  r = test::run_cli({"generate", "--n", "-5", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--n: -5 is not a valid value") != std::string::npos);
  r = test::run_cli({"generate", "--n", "99999999999999999999", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("is out of range") != std::string::npos);
  r = test::run_cli({"generate", "--level", "-2", "--ppb", "3", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--level: -2 is not a valid value") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  // --input is not an option of generate, so its help does not offer it.
  r = test::run_cli({"generate", "--help"});
  CHECK(r.code == 0);
  CHECK(r.out.find("--ppb") != std::string::npos);
  CHECK(r.out.find("--input") == std::string::npos);
  // Writing into a folder that does not exist: exit 2, naming the path given.
  const std::string missing = dir.file("nope/g.csv");
  r = test::run_cli({"generate", "--n", "10", "--output", missing});
  CHECK(r.code == 2);
  CHECK(r.err.find(missing + ": cannot write: folder") != std::string::npos);
  CHECK(r.err.find(".tmp.") == std::string::npos);
}

TEST_CASE("extreme layouts: a thin shell, one crowded core, clusters at the corners") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const Particles shell = test::make("shell", dim, 4000, 2);
    for (std::size_t i = 0; i < shell.size(); ++i) {
      double r2 = 0;
      for (int a = 0; a < dim; ++a) r2 += (shell.coord(i, a) - 0.5) * (shell.coord(i, a) - 0.5);
      CHECK(std::sqrt(r2) >= 0.5 * (1 - 1e-3) - 1e-12);
      CHECK(std::sqrt(r2) <= 0.5 + 1e-12);
    }
    const Particles core = test::make("core", dim, 4000, 2);
    const Tree t = build_tree(core, 10, default_domain(core), false);
    CHECK(t.max_box_count() >= 0.98 * core.size());
    const Particles corners = test::make("corners", dim, 4000, 2);
    const Domain d = default_domain(corners);
    CHECK(d.side == 1.0);
    for (int a = 0; a < dim; ++a) CHECK(d.origin[a] == 0.0);
    CHECK(build_tree(corners, 8, d, false).nonempty_boxes() == (1u << dim));
    // Seeded: the same seed gives the same particles.
    CHECK(test::make("shell", dim, 100, 9).x == test::make("shell", dim, 100, 9).x);
  }
  test::TempDir dir;
  const auto r = test::run_cli({"generate", "--dist", "corners", "--dim", "3", "--n", "64", "--output", dir.file("c.csv")});
  CHECK(r.code == 0);
}
