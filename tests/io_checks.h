#pragma once
// Helpers for the file-format tests: exact comparison of particles, and binary test files built
// byte by byte (independently of the writers under test).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/particles.h"
#include "helpers.h"

namespace nf::test {

inline std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

//! Bitwise equality of two double arrays (so -0.0 and NaN payloads count).
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (bits_of(a[i]) != bits_of(b[i])) return false;
  return true;
}

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
