// Dubinski tables (io/table.h): the real file's row layout as C and Fortran print it, accepted
// variations (comments, blank lines, 3 to 7 columns), and bad rows naming file, line and problem.
#include <cstdio>
#include <cstdlib>

#include "core/errors.h"
#include "io/particle_file.h"
#include "io/table.h"
#include "io_checks.h"

using namespace nf;
using namespace nf::io;
using nf::test::check_has;
using nf::test::read_error;
using nf::test::TempDir;
using nf::test::write_text;

TEST_CASE("Dubinski tables: the real file's row layout, accepted variations and bad rows") {
  TempDir dir;
  SUBCASE("81920 rows of mass x y z vx vy vz as printed by C and Fortran") {
    std::string text;
    std::vector<std::vector<double>> rows;
    nf::Random r(3);
    char line[256];
    for (int i = 0; i < 81920; ++i) {
      std::vector<double> v = {r.uniform(1e-6, 1e-4)};
      for (int k = 0; k < 6; ++k) v.push_back(r.uniform(-30.0, 30.0));
      const char* fmt = i % 3 == 0   ? " %.7e %.7e %.7e %.7e %.7e %.7e %.7e\n"
                        : i % 3 == 1 ? "%14.6E\t%14.6f\t%14.6f %14.6f  %g %g %g\n"
                                     : "%g %g %g %g %g %g %g \r\n";
      std::snprintf(line, sizeof line, fmt, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
      text += line;
      // The value the file holds is the text's value.
      std::vector<double> parsed(7);
      char* c = line;
      for (double& d : parsed) d = std::strtod(c, &c);
      rows.push_back(parsed);
    }
    const std::string path = dir.file("dubinski.tab");
    write_text(path, text);
    const Particles p = read_particles(path);
    REQUIRE(p.size() == 81920);
    CHECK(p.dim == 3);
    CHECK(p.has_velocities());
    bool same = true;
    for (std::size_t i = 0; i < p.size(); ++i)
      same = same && p.m[i] == rows[i][0] && p.x[i] == rows[i][1] && p.y[i] == rows[i][2] && p.z[i] == rows[i][3] &&
             p.vx[i] == rows[i][4] && p.vy[i] == rows[i][5] && p.vz[i] == rows[i][6];
    CHECK(same);
  }
  SUBCASE("comments, blank lines, no final newline; 3, 4 and 5 columns") {
    write_text(dir.file("a.dat"), "# mass x y z\n\n  1 2 3 4\n\t0.5\t-1\t-2\t-3   \n\n2 0 0 1e-3");
    Particles p = read_particles(dir.file("a.dat"));
    REQUIRE(p.size() == 3);
    CHECK(p.dim == 3);
    CHECK_FALSE(p.has_velocities());
    CHECK(p.m == std::vector<double>{1, 0.5, 2});
    CHECK(p.z == std::vector<double>{4, -3, 1e-3});
    write_text(dir.file("b.txt"), "1 2 3\n4 5 6\n");
    p = read_particles(dir.file("b.txt"));
    CHECK(p.dim == 2);
    CHECK(p.y == std::vector<double>{3, 6});
    write_text(dir.file("c.txt"), "1 2 3 4 5\n");
    p = read_particles(dir.file("c.txt"));
    CHECK(p.dim == 2);
    CHECK(p.vx == std::vector<double>{4});
    CHECK(p.vy == std::vector<double>{5});
    write_text(dir.file("empty.tab"), "");
    CHECK(read_particles(dir.file("empty.tab")).size() == 0);
  }
  SUBCASE("bad rows name the file, the line and the problem") {
    const std::string path = dir.file("bad.tab");
    auto error_for = [&](const std::string& text) {
      write_text(path, text);
      return read_error(path);
    };
    std::string e = error_for("1 2 3 4 5 6\n");
    check_has(e, path + ":1: 6 columns");
    check_has(e, "mass x y z vx vy vz");
    e = error_for("# header\n1 2 3 4 5 6 7\n1 2 3 4 5 6 7\n1 2 3 4 5 6\n");
    check_has(e, path + ":4: 6 columns, but the first row (line 2) has 7");
    e = error_for("1 2 3 4 5 6 7\n1 2 3 4 5 6 7\n1 2 3 4");
    check_has(e, ":3: 4 columns");
    check_has(e, "the file looks truncated");
    check_has(error_for("1 2 3 4\n1 2 x 4\n"), ":2: column 3 (y): 'x' is not a number");
    check_has(error_for("1 2 3 4\n1 2 3 1,5\n"), "column 4 (z): '1,5' is not a number");
    check_has(error_for("1 2 3 4\n1 2 nan 4\n"), ":2: column 3: y = nan is not finite");
    check_has(error_for("1 2 3 4\n-1 2 3 4\n"), ":2: column 1: negative mass -1");
    check_has(error_for("1 2 3 1e999\n"), "'1e999' is not a number");
  }
}
