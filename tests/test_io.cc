// Particle file formats (DESIGN.md section 13): exact round trips, Tipsy files built byte by byte
// in both byte orders and header sizes, the .bin layout as documented, Dubinski tables, refusal of
// truncated and inconsistent files, and the commands that read and convert them.
#include <cstdio>
#include <filesystem>

#include "core/errors.h"
#include "io/bin_file.h"
#include "io/particle_file.h"
#include "io/table.h"
#include "io/tipsy.h"
#include "io_checks.h"

using namespace nf;
using namespace nf::io;
using nf::test::ByteWriter;
using nf::test::round_to_float;
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

// The message of the InputError that reading `path` throws ("" if it reads).
std::string read_error(const std::string& path, const std::string& format = "") {
  try {
    read_particles(path, format);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void check_has(const std::string& message, const std::string& part) {
  INFO("message: " << message);
  CHECK(message.find(part) != std::string::npos);
}

// Plummer particles with random masses; optional velocities and ids (not the row numbers).
Particles sample(int dim, std::int64_t n, bool velocities, bool ids, std::uint64_t seed = 9) {
  Particles p = test::make("plummer", dim, n, seed);
  if (!velocities) p.vx.clear(), p.vy.clear(), p.vz.clear();
  if (ids)
    for (std::int64_t i = 0; i < n; ++i) p.id.push_back(5 * i - 3);
  return p;
}

// A Tipsy file: 2 gas, 3 dark, 1 star records with distinct float32 values; every field of the
// record set (the type-specific fields too), z = vz = 0 when dim == 2.
std::string tipsy_bytes(bool big, bool padded, int dim, Particles& expected) {
  ByteWriter w(big);
  const int counts[3] = {2, 3, 1}, extra[3] = {5, 2, 4};  // floats after mass, pos, vel
  w.f64(0.625);
  w.i32(6);
  w.i32(dim);
  for (int c : counts) w.i32(c);
  if (padded) w.i32(0);
  expected = Particles();
  expected.dim = dim;
  expected.time = 0.625;
  int k = 0;
  for (int t = 0; t < 3; ++t)
    for (int r = 0; r < counts[t]; ++r, ++k) {
      const float v[7] = {0.5f + k, 1.25f * k - 2.0f, 0.75f - k, dim == 3 ? 0.125f * k + 1.0f : 0.0f,
                          0.5f * k - 1.0f, -0.25f * k, dim == 3 ? 2.0f - k : 0.0f};
      for (float f : v) w.f32(f);
      for (int e = 0; e < extra[t]; ++e) w.f32(100.0f + 10 * t + e);  // rho, temp, ..., eps, phi
      expected.m.push_back(v[0]);
      expected.x.push_back(v[1]);
      expected.y.push_back(v[2]);
      if (dim == 3) expected.z.push_back(v[3]);
      expected.vx.push_back(v[4]);
      expected.vy.push_back(v[5]);
      if (dim == 3) expected.vz.push_back(v[6]);
    }
  return w.bytes();
}

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

TEST_CASE("Tipsy files built byte by byte: both byte orders, both header sizes, gas/dark/star in file order") {
  TempDir dir;
  for (bool big : {true, false})
    for (bool padded : {true, false})
      for (int dim : {2, 3}) {
        CAPTURE(big);
        CAPTURE(padded);
        CAPTURE(dim);
        Particles expected;
        const std::string bytes = tipsy_bytes(big, padded, dim, expected);
        CHECK(bytes.size() == (padded ? 32u : 28u) + 2 * 48 + 3 * 36 + 44);
        const std::string path = dir.file("t.std");
        write_text(path, bytes);
        TipsyInfo info;
        const Particles q = read_tipsy(path, &info);
        test::check_same(expected, q);
        CHECK(info.order == (big ? ByteOrder::big : ByteOrder::little));
        CHECK(info.header_bytes == (padded ? 32 : 28));
        CHECK(info.nsph == 2);
        CHECK(info.ndark == 3);
        CHECK(info.nstar == 1);
        CHECK(q.id.empty());
      }
  // The writer's default output is the standard file: big-endian, 32-byte header, dark records.
  Particles p = sample(3, 3, true, false);
  round_to_float(p);
  p.time = 2.0;
  write_tipsy(dir.file("w.tipsy"), p);
  const std::string bytes = test::read_text(dir.file("w.tipsy"));
  ByteWriter header(true);
  header.f64(2.0);
  for (std::int32_t v : {3, 3, 0, 3, 0, 0}) header.i32(v);
  REQUIRE(bytes.size() == 32 + 3 * 36);
  CHECK(bytes.substr(0, 32) == header.bytes());
  ByteWriter first(true);
  for (double v : {p.m[0], p.x[0], p.y[0], p.z[0], p.vx[0], p.vy[0], p.vz[0], 0.0, 0.0})
    first.f32(static_cast<float>(v));
  CHECK(bytes.substr(32, 36) == first.bytes());
  // And the native little-endian, 28-byte variant reads back too.
  write_tipsy(dir.file("n.tipsy"), p, {ByteOrder::little, false});
  TipsyInfo info;
  test::check_same(p, read_tipsy(dir.file("n.tipsy"), &info));
  CHECK(info.order == ByteOrder::little);
  CHECK(info.header_bytes == 28);
}

TEST_CASE("Tipsy: truncated and inconsistent files are refused, naming the record and the sizes") {
  TempDir dir;
  Particles expected;
  const std::string good = tipsy_bytes(true, true, 3, expected);  // 280 bytes
  const std::string path = dir.file("t.tipsy");
  auto error_for = [&](const std::string& bytes) {
    write_text(path, bytes);
    return read_error(path);
  };
  std::string e = error_for(good.substr(0, 32 + 48 + 20));
  check_has(e, path);
  check_has(e, "20 bytes into gas record 2 of 2 (particle index 1)");
  check_has(e, "280 bytes (32-byte header) or 276 (28-byte header)");
  check_has(e, "the file is 100 bytes");
  e = error_for(good.substr(0, 32 + 2 * 48 + 36));  // record boundary: dark record 2 missing entirely
  check_has(e, "0 bytes into dark record 2 of 3 (particle index 3)");
  e = error_for(good.substr(0, good.size() - 1));
  check_has(e, "star record 1 of 1 (particle index 5)");
  check_has(e, "the file is 279 bytes");
  e = error_for(good + "xyz");
  check_has(e, "the file is 283 bytes");
  check_has(e, "3 bytes more than the records need");
  check_has(error_for(good.substr(0, 20)), "shorter than a Tipsy header");
  check_has(error_for(std::string(64, 'a')), "not a Tipsy file");
  // nbodies that disagrees with the counts, and ndim 4, in both orders
  for (bool big : {true, false}) {
    ByteWriter w(big);
    w.f64(0);
    for (std::int32_t v : {7, 3, 2, 3, 1, 0}) w.i32(v);
    check_has(error_for(w.bytes()), "nsph + ndark + nstar = nbodies");
    ByteWriter w4(big);
    w4.f64(0);
    for (std::int32_t v : {0, 4, 0, 0, 0, 0}) w4.i32(v);
    check_has(error_for(w4.bytes()), "ndim must be 2 or 3");
  }
  // values: NaN position, negative mass, z in a 2D file
  std::string bad = good;
  ByteWriter nan(true);
  nan.f32(std::numeric_limits<float>::quiet_NaN());
  bad.replace(32 + 2 * 48 + 36 + 4, 4, nan.bytes());  // x of dark record 2
  e = error_for(bad);
  check_has(e, "dark record 2 (particle index 3): x = nan is not finite");
  bad = good;
  ByteWriter neg(true);
  neg.f32(-1.0f);
  bad.replace(32, 4, neg.bytes());
  check_has(error_for(bad), "gas record 1 (particle index 0): negative mass -1");
  const std::string flat = tipsy_bytes(true, true, 2, expected);
  bad = flat;
  ByteWriter z(true);
  z.f32(0.5f);
  bad.replace(32 + 48 + 12, 4, z.bytes());  // z of gas record 2
  check_has(error_for(bad), "ndim is 2 but z = 0.5");
}

TEST_CASE(".bin: the documented layout, read from a file built byte by byte") {
  TempDir dir;
  ByteWriter w(false);
  w.raw(std::string("NFBIN\r\n\x1a", 8));
  w.u32(1);
  w.u32(2);      // dim
  w.u64(3);      // N
  w.u32(3);      // ids and velocities
  w.u32(0);
  w.f64(7.5);    // time
  const double x[3] = {1, -2, 0.1}, y[3] = {4, 5, 6}, m[3] = {0.5, 0, 2}, vx[3] = {-1, -2, -3}, vy[3] = {9, 8, 7};
  for (double v : x) w.f64(v);
  for (double v : y) w.f64(v);
  for (double v : m) w.f64(v);
  for (std::uint64_t id : {10u, 20u, 30u}) w.u64(id);
  for (double v : vx) w.f64(v);
  for (double v : vy) w.f64(v);
  const std::string path = dir.file("h.bin");
  write_text(path, w.bytes());
  const Particles p = read_bin(path);
  CHECK(p.dim == 2);
  CHECK(p.time == 7.5);
  CHECK(p.x == std::vector<double>(x, x + 3));
  CHECK(p.y == std::vector<double>(y, y + 3));
  CHECK(p.m == std::vector<double>(m, m + 3));
  CHECK(p.id == std::vector<std::int64_t>{10, 20, 30});
  CHECK(p.vx == std::vector<double>(vx, vx + 3));
  CHECK(p.vy == std::vector<double>(vy, vy + 3));
  CHECK(p.z.empty());
  CHECK(p.vz.empty());
  // Our writer produces the same bytes.
  write_bin(dir.file("again.bin"), p);
  CHECK(test::read_text(dir.file("again.bin")) == w.bytes());
}

TEST_CASE(".bin: bad headers, truncation, trailing bytes and bad values are refused") {
  TempDir dir;
  Particles p = sample(3, 100, true, true);
  write_bin(dir.file("ok.bin"), p);
  const std::string good = test::read_text(dir.file("ok.bin"));
  REQUIRE(good.size() == 40 + 100 * 8 * 8);
  const std::string path = dir.file("bad.bin");
  auto error_for = [&](const std::string& bytes) {
    write_text(path, bytes);
    return read_error(path);
  };
  auto patched = [&](std::size_t offset, const std::string& bytes) {
    std::string s = good;
    s.replace(offset, bytes.size(), bytes);
    return s;
  };
  auto le32 = [](std::uint32_t v) {
    ByteWriter w(false);
    w.u32(v);
    return w.bytes();
  };
  auto le64 = [](std::uint64_t v) {
    ByteWriter w(false);
    w.u64(v);
    return w.bytes();
  };
  std::string e = error_for(good.substr(0, 40 + 5 * 800 + 8 * 37 + 3));  // inside vx, particle 37
  check_has(e, path);
  check_has(e, "N = 100, ids, velocities");
  check_has(e, "should be 6440 bytes");
  check_has(e, "it is 4339 bytes");
  check_has(e, "array 'vx' ends after 37 of its 100 values");
  e = error_for(good.substr(0, 40 + 800 + 8));
  check_has(e, "array 'y' ends after 1 of its 100 values");
  check_has(error_for(good + "x"), "it is 6441 bytes");
  check_has(error_for(good.substr(0, 39)), "shorter than the 40-byte .bin header");
  check_has(error_for(patched(0, "NFBIM")), "not a nearfield .bin file");
  check_has(error_for(patched(8, le32(2))), "format version 2");
  check_has(error_for(patched(12, le32(4))), "dim = 4");
  check_has(error_for(patched(24, le32(7))), "unknown field bits 7");
  check_has(error_for(patched(28, le32(1))), "reserved 1");
  check_has(error_for(patched(16, le64(~0ull))), "larger than 2^64 bytes");
  check_has(error_for(patched(16, le64(101))), "should be 6504 bytes");
  ByteWriter nan(false);
  nan.f64(std::numeric_limits<double>::infinity());
  check_has(error_for(patched(40 + 2 * 800 + 8 * 5, nan.bytes())), "particle index 5: z = inf is not finite");
  ByteWriter neg(false);
  neg.f64(-0.5);
  check_has(error_for(patched(40 + 3 * 800 + 8 * 99, neg.bytes())), "particle index 99: negative mass -0.5");
}

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
