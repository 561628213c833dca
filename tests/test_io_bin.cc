// The .bin format (io/bin_file.h): the documented layout read from a file built byte by byte and
// written back identically; bad headers, truncation, trailing bytes and bad values refused.
#include <filesystem>
#include <limits>
#include <utility>

#include "core/errors.h"
#include "io/bin_file.h"
#include "io/csv_file.h"
#include "io/particle_file.h"
#include "io_checks.h"

using namespace nf;
using namespace nf::io;
using nf::test::ByteWriter;
using nf::test::check_has;
using nf::test::read_error;
using nf::test::sample;
using nf::test::TempDir;
using nf::test::write_text;

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
  // A header claiming 10^12 particles is refused by its size check, before anything is allocated
  // (fuzz/fuzz_bin.cc runs with a 512 MiB allocation limit; fuzz/corpus/bin/claims_1e12.bin).
  check_has(error_for(patched(16, le64(1000000000000ull))), "N = 1000000000000");
  ByteWriter nan(false);
  nan.f64(std::numeric_limits<double>::infinity());
  check_has(error_for(patched(40 + 2 * 800 + 8 * 5, nan.bytes())), "particle index 5: z = inf is not finite");
  ByteWriter neg(false);
  neg.f64(-0.5);
  check_has(error_for(patched(40 + 3 * 800 + 8 * 99, neg.bytes())), "particle index 99: negative mass -0.5");
  // Ids that repeat are refused on reading, as in CSV (ids name particles in every output), and
  // never written; nor is a time the reader refuses.
  const std::string id3 = std::to_string(p.id[3]);
  check_has(error_for(patched(40 + 4 * 800 + 8 * 7, le64(std::uint64_t(p.id[3])))),
            "particle 7 has id " + id3 + ", already the id of particle 3");
  Particles twice = p;
  twice.id[7] = twice.id[3];
  const std::string repeat = "particle 7 has id " + id3;
  CHECK_THROWS_WITH_AS(write_bin(dir.file("twice.bin"), twice), doctest::Contains(repeat.c_str()), UsageError);
  CHECK_THROWS_WITH_AS(write_particles_csv(dir.file("twice.csv"), twice), doctest::Contains("(ids must be unique)"),
                       UsageError);
  Particles late = p;
  late.time = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(write_bin(dir.file("late.bin"), late), doctest::Contains("time = nan is not finite"), UsageError);
  for (const char* name : {"twice.bin", "twice.csv", "late.bin"}) CHECK_FALSE(std::filesystem::exists(dir.file(name)));
  Particles q;  // the first repeat, in or out of order; none
  q.id = {5, 3, 9, 3, 1, 5};
  CHECK(q.repeated_id() == std::pair<std::size_t, std::size_t>{1, 3});
  q.id = {5, 3, 9};
  CHECK(q.repeated_id() == std::pair<std::size_t, std::size_t>{0, 0});
  q.id = {1, 2, 3};
  CHECK(q.repeated_id() == std::pair<std::size_t, std::size_t>{0, 0});
}
