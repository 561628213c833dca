#pragma once
// Helpers for the file-format tests: exact comparison of particles, sample particles, the error a
// file gets, and binary test files built byte by byte (independently of the writers under test).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/particles.h"
#include "io/particle_file.h"
#include "helpers.h"

namespace nf::test {

//! Checks that q is p bit for bit (dim, every array, ids, velocities; time if `time`).
inline void check_same(const Particles& p, const Particles& q, bool ids = true, bool time = true) {
  CHECK(q.dim == p.dim);
  REQUIRE(q.size() == p.size());
  CHECK(same_bits(q.x, p.x));
  CHECK(same_bits(q.y, p.y));
  CHECK(same_bits(q.z, p.z));
  CHECK(same_bits(q.m, p.m));
  CHECK(q.has_velocities() == p.has_velocities());
  CHECK(same_bits(q.vx, p.vx));
  CHECK(same_bits(q.vy, p.vy));
  CHECK(same_bits(q.vz, p.vz));
  if (ids) CHECK(q.id == p.id);
  if (time) CHECK(bits_of(q.time) == bits_of(p.time));
}

//! The message of the InputError that reading `path` throws ("" if it reads).
inline std::string read_error(const std::string& path, const std::string& format = "") {
  try {
    io::read_particles(path, format);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline void check_has(const std::string& message, const std::string& part) {
  INFO("message: " << message);
  CHECK(message.find(part) != std::string::npos);
}

//! Plummer particles with random masses; optional velocities and ids (not the row numbers).
inline Particles sample(int dim, std::int64_t n, bool velocities, bool ids, std::uint64_t seed = 9) {
  Particles p = make("plummer", dim, n, seed);
  if (!velocities) p.vx.clear(), p.vy.clear(), p.vz.clear();
  if (ids)
    for (std::int64_t i = 0; i < n; ++i) p.id.push_back(5 * i - 3);
  return p;
}

//! Rounds every value to float32 (what a Tipsy file can hold exactly).
inline void round_to_float(Particles& p) {
  for (auto* v : {&p.x, &p.y, &p.z, &p.m, &p.vx, &p.vy, &p.vz})
    for (double& d : *v) d = static_cast<double>(static_cast<float>(d));
}

//! Bytes of a binary file, appended value by value in a chosen byte order with explicit shifts.
class ByteWriter {
 public:
  explicit ByteWriter(bool big_endian) : big_(big_endian) {}
  void u32(std::uint32_t v) { put(v, 4); }
  void i32(std::int32_t v) { put(static_cast<std::uint32_t>(v), 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void f32(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    put(b, 4);
  }
  void f64(double d) { put(bits_of(d), 8); }
  void raw(const std::string& s) { bytes_ += s; }
  const std::string& bytes() const { return bytes_; }

 private:
  void put(std::uint64_t v, int n) {
    for (int k = 0; k < n; ++k) {
      const int shift = 8 * (big_ ? n - 1 - k : k);
      bytes_ += static_cast<char>((v >> shift) & 0xff);
    }
  }
  bool big_;
  std::string bytes_;
};

}  // namespace nf::test
