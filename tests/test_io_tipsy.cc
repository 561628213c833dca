// Tipsy files (io/tipsy.h), built byte by byte: both byte orders, both header sizes, gas, dark
// and star records in file order, the writer's standard output; truncated and inconsistent files
// refused, naming the record and the sizes.
#include <filesystem>
#include <tuple>

#include "core/errors.h"
#include "io/particle_file.h"
#include "io/tipsy.h"
#include "io_checks.h"

using namespace nf;
using namespace nf::io;
using nf::test::ByteWriter;
using nf::test::check_has;
using nf::test::read_error;
using nf::test::round_to_float;
using nf::test::sample;
using nf::test::TempDir;
using nf::test::write_text;

namespace {

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
  // Values float32 cannot hold are refused, the file left unwritten: one past its range, and a
  // mass it would round to 0 (a position or velocity that small only moves by less than 1e-38).
  for (const auto& c : {std::tuple<int, double, const char*>{1, 1e39, "does not fit"}, {0, 1e-50, "holds as 0"}}) {
    const char* why = std::get<2>(c);  // not a structured binding: CAPTURE's lambda takes it (clang)
    CAPTURE(why);
    Particles q = p;
    (std::get<0>(c) == 0 ? q.m : q.x)[1] = std::get<1>(c);
    CHECK_THROWS_WITH_AS(write_tipsy(dir.file("bad.tipsy"), q), doctest::Contains(why), UsageError);
    CHECK_FALSE(std::filesystem::exists(dir.file("bad.tipsy")));
  }
  Particles tiny = p;
  tiny.x[1] = 1e-50;
  CHECK_NOTHROW(write_tipsy(dir.file("tiny.tipsy"), tiny));
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
  // A file of 28 to 31 bytes ends inside the 32-byte header, not in a record (fuzzing found
  // "gas record 384307168202282326 of 0"): no particles and one byte of pad, one particle and two.
  for (std::int32_t n : {0, 1}) {
    ByteWriter w(true);
    w.f64(0);
    for (std::int32_t v : {n, 3, 0, n, 0}) w.i32(v);
    e = error_for(w.bytes() + std::string(1 + n, '\0'));
    check_has(e, "the file ends inside the 32-byte header, after " + std::to_string(29 + n) + " of its bytes");
    CHECK(e.find("record") == std::string::npos);
  }
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
