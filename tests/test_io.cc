// Particle files in every format (docs/design.md §13): exact round trips, files larger than the
// readers' blocks, formats by extension and by name, the commands that read them (--input) and
// convert between them, and generate writing each. (Each format's own layout and refusals:
// test_io_csv.cc, test_io_bin.cc, test_io_tipsy.cc, test_io_table.cc.)
#include <filesystem>

#include "core/errors.h"
#include "ic/generate.h"
#include "io/bin_file.h"
#include "io/particle_file.h"
#include "io/tipsy.h"
#include "io_checks.h"

using namespace nf;
using namespace nf::io;
using nf::test::check_has;
using nf::test::read_error;
using nf::test::round_to_float;
using nf::test::sample;
using nf::test::TempDir;
using nf::test::write_text;

namespace {

// `nearfield tree` output without its timing line.
std::string without_timing(const std::string& out) {
  const std::size_t at = out.find("build_ms:");
  return at == std::string::npos ? out : out.substr(0, at);
}

const FileFormat kFormats[] = {FileFormat::csv, FileFormat::table, FileFormat::bin, FileFormat::tipsy};

std::string extension(FileFormat f) { return f == FileFormat::table ? ".tab" : std::string(".") + to_string(f); }

}  // namespace

TEST_CASE("every format round-trips particles exactly (2D/3D, with and without ids and velocities)") {
  TempDir dir;
  for (FileFormat f : kFormats)
    for (int dim : {2, 3})
      for (bool vel : {false, true})
        for (bool ids : {false, true})
          for (std::int64_t n : {0, 1, 7, 1000}) {
            CAPTURE(to_string(f));
            CAPTURE(dim);
            CAPTURE(vel);
            CAPTURE(ids);
            CAPTURE(n);
            Particles p = sample(dim, n, vel, ids);
            if (n > 0 && f != FileFormat::tipsy) {
              p.x[0] = -0.0;  // sign of zero, subnormals and extremes survive text and binary alike
              p.y[0] = 4.9406564584124654e-324;
              p.m[0] = 1e-300;
              if (n > 1) p.x[1] = -1.7976931348623157e308;
            }
            if (f == FileFormat::tipsy) round_to_float(p);
            if (f == FileFormat::bin || f == FileFormat::tipsy) p.time = 0.1 * dim + n;
            const std::string path = dir.file("p" + extension(f));
            write_particles(path, p);
            const Particles q = read_particles(path);
            const bool keeps_ids = f == FileFormat::csv || f == FileFormat::bin;
            Particles expected = p;
            if (!keeps_ids) expected.id.clear();
            if (f == FileFormat::table && n == 0) expected.dim = 3, expected.vx.clear();   // an empty table is 3D
            if (f == FileFormat::tipsy && n == 0) expected.vx.clear(), expected.vy.clear(), expected.vz.clear();
            test::check_same(expected, q);
            // What the format cannot hold is reported, and nothing else.
            const auto lost = fields_not_stored(p, f);
            CHECK((std::find(lost.begin(), lost.end(), "ids") != lost.end()) == (ids && n > 0 && !keeps_ids));
            CHECK(lost.size() <= 1u + (f == FileFormat::tipsy && vel && n == 0));
          }
}

TEST_CASE("large files cross the readers' block boundaries intact") {
  TempDir dir;
  Particles p = sample(3, 600000, true, true, 4);  // 4.8 MB per array: more than one 4 MiB block
  p.time = 12.5;
  write_bin(dir.file("big.bin"), p);
  test::check_same(p, read_bin(dir.file("big.bin")));
  Particles t = sample(3, 70000, true, false, 5);  // more than one block of 65536 Tipsy records
  round_to_float(t);
  write_tipsy(dir.file("big.tipsy"), t);
  test::check_same(t, read_tipsy(dir.file("big.tipsy")));
}

TEST_CASE("formats by extension, by name, and overridden") {
  CHECK(file_format_of("a/b.csv") == FileFormat::csv);
  CHECK(file_format_of("b.TIPSY") == FileFormat::tipsy);
  CHECK(file_format_of("b.std") == FileFormat::tipsy);
  CHECK(file_format_of("dubinski.tab") == FileFormat::table);
  CHECK(file_format_of("x.dat") == FileFormat::table);
  CHECK(file_format_of("x.txt") == FileFormat::table);
  CHECK(file_format_of("x.bin") == FileFormat::bin);
  CHECK_THROWS_AS(file_format_of("x.gz"), UsageError);
  CHECK_THROWS_AS(file_format_of("dir.v2/file"), UsageError);
  CHECK(parse_file_format("dubinski") == FileFormat::table);
  CHECK_THROWS_AS(parse_file_format("hdf5"), UsageError);
  TempDir dir;
  Particles p = sample(3, 10, true, false);
  round_to_float(p);
  write_particles(dir.file("state.dat"), p, "tipsy");  // a Tipsy file under another extension
  CHECK(read_error(dir.file("state.dat")).find("column") != std::string::npos);  // read as a table: refused
  test::check_same(p, read_particles(dir.file("state.dat"), "tipsy"));
}

TEST_CASE("commands read every format through --input") {
  TempDir dir;
  Particles p = sample(3, 300, true, false, 12);
  round_to_float(p);  // so that every format holds the same particles
  std::string tree_out, forces_csv;
  for (FileFormat f : kFormats) {
    CAPTURE(to_string(f));
    const std::string in = dir.file("in" + extension(f));
    write_particles(in, p);
    const auto t = test::run_cli({"tree", "--input", in, "--level", "3"});
    INFO(t.err);
    REQUIRE(t.code == 0);
    if (tree_out.empty()) tree_out = without_timing(t.out);
    CHECK(without_timing(t.out) == tree_out);
    const auto fo = test::run_cli({"forces", "--input", in, "--level", "2", "--kernel", "cpu-serial", "--output",
                                   dir.file("acc.csv")});
    REQUIRE(fo.code == 0);
    const std::string acc = test::read_text(dir.file("acc.csv"));
    if (forces_csv.empty()) forces_csv = acc;
    CHECK(acc == forces_csv);
  }
  // --input-format names a format the extension does not say
  write_particles(dir.file("in.data"), p, FileFormat::bin);
  auto r = test::run_cli({"tree", "--input", dir.file("in.data"), "--level", "3"});
  CHECK(r.code == 2);
  check_has(r.err, "--input-format");
  r = test::run_cli({"tree", "--input", dir.file("in.data"), "--input-format", "bin", "--level", "3"});
  CHECK(r.code == 0);
  CHECK(without_timing(r.out) == tree_out);
  r = test::run_cli({"validate", "--input", dir.file("in.data"), "--input-format", "bin", "--level", "2", "--kernel",
                     "cpu-serial", "--precision", "double"});
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("convert: between all formats, exactly; bad input or output leaves nothing behind") {
  TempDir dir;
  Particles p = sample(3, 257, true, false, 21);
  round_to_float(p);
  for (FileFormat from : kFormats)
    for (FileFormat to : kFormats) {
      CAPTURE(to_string(from));
      CAPTURE(to_string(to));
      const std::string a = dir.file("a" + extension(from)), b = dir.file("b" + extension(to));
      write_particles(a, p);
      const auto r = test::run_cli({"convert", "--input", a, "--output", b});
      INFO(r.err);
      REQUIRE(r.code == 0);
      test::check_same(p, read_particles(b), true, false);
      std::filesystem::remove(b);
    }
  // overrides on both sides
  write_particles(dir.file("x.one"), p, FileFormat::tipsy);
  auto r = test::run_cli({"convert", "--input", dir.file("x.one"), "--input-format", "tipsy", "--output",
                          dir.file("y.two"), "--format", "tab"});
  REQUIRE(r.code == 0);
  test::check_same(p, read_particles(dir.file("y.two"), "tab"));
  // 2D with ids through csv and bin keeps everything; to Tipsy the ids and float64 digits go, with a note
  Particles q = sample(2, 50, true, true, 22);
  write_particles(dir.file("q.csv"), q);
  r = test::run_cli({"convert", "--input", dir.file("q.csv"), "--output", dir.file("q.bin")});
  REQUIRE(r.code == 0);
  test::check_same(q, read_particles(dir.file("q.bin")));
  r = test::run_cli({"convert", "--input", dir.file("q.bin"), "--output", dir.file("q.tipsy")});
  REQUIRE(r.code == 0);
  check_has(r.err, "does not store: ids, float64 precision");
  // without --output: read and check only
  r = test::run_cli({"convert", "--input", dir.file("q.bin")});
  REQUIRE(r.code == 0);
  check_has(r.out, "read 50 particles, 2D, velocities, ids from " + dir.file("q.bin") + " (bin): ");
  check_has(r.out, "GB/s");
  // a truncated input: exit 2, the file named, no output
  const std::string whole = test::read_text(dir.file("q.bin"));
  write_text(dir.file("cut.bin"), whole.substr(0, whole.size() - 5));
  r = test::run_cli({"convert", "--input", dir.file("cut.bin"), "--output", dir.file("out.csv")});
  CHECK(r.code == 2);
  check_has(r.err, dir.file("cut.bin"));
  check_has(r.err, "truncated");
  CHECK_FALSE(std::filesystem::exists(dir.file("out.csv")));
  // the same for a CSV file cut inside a row, and a table cut inside a row
  const std::string csv = test::read_text(dir.file("q.csv"));
  write_text(dir.file("cut.csv"), csv.substr(0, csv.size() - 30));
  r = test::run_cli({"convert", "--input", dir.file("cut.csv"), "--output", dir.file("out.bin")});
  CHECK(r.code == 2);
  check_has(r.err, dir.file("cut.csv"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out.bin")));
  write_particles(dir.file("q.tab"), q);
  const std::string tab = test::read_text(dir.file("q.tab"));
  write_text(dir.file("cut.tab"), tab.substr(0, tab.size() - 30));
  r = test::run_cli({"convert", "--input", dir.file("cut.tab"), "--output", dir.file("out.bin")});
  CHECK(r.code == 2);
  check_has(r.err, dir.file("cut.tab") + ":50:");
  check_has(r.err, "the file looks truncated");
  CHECK_FALSE(std::filesystem::exists(dir.file("out.bin")));
  // a value Tipsy cannot hold: exit 2, no output and no temporary file
  Particles huge = sample(3, 5, false, false);
  huge.x[3] = 1e300;
  write_particles(dir.file("huge.bin"), huge);
  r = test::run_cli({"convert", "--input", dir.file("huge.bin"), "--output", dir.file("huge.tipsy")});
  CHECK(r.code == 2);
  check_has(r.err, "particle index 3 has value 1e+300");
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    files += entry.path().filename().string().find("huge") != std::string::npos;
  CHECK(files == 1);
  // unknown formats and a missing file
  CHECK(test::run_cli({"convert", "--input", dir.file("q.bin"), "--output", dir.file("o.xyz")}).code == 2);
  CHECK(test::run_cli({"convert", "--input", dir.file("q.bin"), "--output", dir.file("o.csv"), "--format", "fits"})
            .code == 2);
  r = test::run_cli({"convert", "--input", dir.file("missing.bin"), "--output", dir.file("o.csv")});
  CHECK(r.code == 2);
  check_has(r.err, "cannot open");
}

TEST_CASE("generate writes every format; galaxies default to 3D and go to a Dubinski table") {
  TempDir dir;
  auto r = test::run_cli({"generate", "--dist", "galaxies", "--n", "1000", "--output", dir.file("g.tab")});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string text = test::read_text(dir.file("g.tab"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 1000);
  const std::string first = text.substr(0, text.find('\n'));
  CHECK(std::count(first.begin(), first.end(), ' ') == 6);  // mass x y z vx vy vz
  const Particles g = read_particles(dir.file("g.tab"));
  GenerateOptions o;
  o.dist = "galaxies";
  o.n = 1000;
  o.dim = 3;
  test::check_same(generate(o), g, true, false);
  r = test::run_cli({"generate", "--dist", "plummer", "--dim", "2", "--n", "10", "--output", dir.file("p.out"),
                     "--format", "bin"});
  REQUIRE(r.code == 0);
  CHECK(read_particles(dir.file("p.out"), "bin").size() == 10);
  CHECK(test::run_cli({"generate", "--dist", "galaxies", "--dim", "2", "--n", "100", "--output", dir.file("x.csv")})
            .code == 2);
  CHECK_FALSE(std::filesystem::exists(dir.file("x.csv")));
}
