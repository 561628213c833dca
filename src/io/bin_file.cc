#include "io/bin_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/output_file.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "io/byte_order.h"
#include "io/input_file.h"

namespace nf::io {
namespace {

constexpr unsigned char kMagic[8] = {'N', 'F', 'B', 'I', 'N', '\r', '\n', 0x1a};
constexpr std::uint32_t kIds = 1, kVelocities = 2;

// Arrays are read in blocks of this many bytes and checked while the block is still in cache: at
// 4 MiB a read(2) call moves enough data that its own overhead does not count.
constexpr std::size_t kBlockBytes = std::size_t(4) << 20;

// Calls f(name, vector, is_mass) for every stored array of p, in file order (the layout in
// bin_file.h); P is Particles or const Particles, the vector std::vector<double> or <int64_t>.
template <class P, class F>
void for_each_array(P& p, bool ids, bool velocities, F&& f) {
  f("x", p.x, false);
  f("y", p.y, false);
  if (p.dim == 3) f("z", p.z, false);
  f("m", p.m, true);
  if (ids) f("id", p.id, false);
  if (velocities) {
    f("vx", p.vx, false);
    f("vy", p.vy, false);
    if (p.dim == 3) f("vz", p.vz, false);
  }
}

std::string describe(int dim, std::uint64_t n, bool ids, bool velocities) {
  std::string s = "dim " + std::to_string(dim) + ", N = " + std::to_string(n);
  if (ids) s += ", ids";
  if (velocities) s += ", velocities";
  return s;
}

void check_block(const std::string& path, const char* name, bool is_mass, const double* v, std::size_t count,
                 std::size_t first) {
  for (std::size_t i = 0; i < count; ++i)
    if (is_mass ? bad_mass(v[i]) : bad_value(v[i]))
      throw_bad_value(path, "particle index " + std::to_string(first + i), name, v[i]);
}
// Any id goes.
void check_block(const std::string&, const char*, bool, const std::int64_t*, std::size_t, std::size_t) {}

}  // namespace

Particles read_bin(const std::string& path) {
  InputFile in(path);
  if (in.size() < kBinHeaderBytes)
    throw InputError(path, 0,
                     "truncated: " + std::to_string(in.size()) + " bytes, shorter than the " +
                         std::to_string(kBinHeaderBytes) + "-byte .bin header");
  unsigned char h[kBinHeaderBytes];
  in.read(h, sizeof h, "the header");
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0)
    throw InputError(path, 0, "not a nearfield .bin file (the first 8 bytes are not the magic \"NFBIN\\r\\n\\x1a\")");
  const auto L = ByteOrder::little;
  const auto version = load<std::uint32_t>(h + 8, L);
  const auto dim = load<std::uint32_t>(h + 12, L);
  const auto n = load<std::uint64_t>(h + 16, L);
  const auto fields = load<std::uint32_t>(h + 24, L);
  const auto reserved = load<std::uint32_t>(h + 28, L);
  const auto time = load<double>(h + 32, L);
  if (version != kBinVersion)
    throw InputError(path, 0, "format version " + std::to_string(version) + "; this build reads version " +
                                  std::to_string(kBinVersion));
  if (dim != 2 && dim != 3) throw InputError(path, 0, "header: dim = " + std::to_string(dim) + ", expected 2 or 3");
  if ((fields & ~(kIds | kVelocities)) != 0 || reserved != 0)
    throw InputError(path, 0, "header: unknown field bits " + std::to_string(fields) + " / reserved " +
                                  std::to_string(reserved) + " (expected bits 0-1 only and reserved 0)");
  if (bad_value(time)) throw_bad_value(path, "header", "time", time);
  const bool ids = fields & kIds, velocities = fields & kVelocities;
  const std::uint64_t arrays = dim + 1 + (ids ? 1 : 0) + (velocities ? dim : 0);
  const std::uint64_t max_n = (std::numeric_limits<std::uint64_t>::max() - kBinHeaderBytes) / (8 * arrays);
  const std::uint64_t payload = in.size() - kBinHeaderBytes;
  if (n > max_n || kBinHeaderBytes + n * 8 * arrays != in.size()) {
    std::string msg = "truncated or inconsistent: the header says " + describe(int(dim), n, ids, velocities) +
                      ", so the file should be ";
    if (n > max_n) {
      msg += "larger than 2^64 bytes";
    } else {
      msg += std::to_string(kBinHeaderBytes + n * 8 * arrays) + " bytes (" + std::to_string(kBinHeaderBytes) +
             "-byte header + " + std::to_string(arrays) + " arrays x " + std::to_string(n) + " x 8 bytes)";
    }
    msg += ", but it is " + std::to_string(in.size()) + " bytes";
    if (n <= max_n && in.size() < kBinHeaderBytes + n * 8 * arrays && n > 0) {
      Particles shape;
      shape.dim = int(dim);
      std::vector<const char*> names;
      for_each_array(shape, ids, velocities, [&](const char* name, auto&, bool) { names.push_back(name); });
      const std::uint64_t k = payload / (8 * n), i = (payload % (8 * n)) / 8;
      msg += ": array '" + std::string(names[k]) + "' ends after " + std::to_string(i) + " of its " +
             std::to_string(n) + " values";
    }
    throw InputError(path, 0, msg);
  }
  if (n > std::numeric_limits<std::size_t>::max() / 8) throw InputError(path, 0, "too many particles for memory");

  Particles p;
  p.dim = int(dim);
  p.time = time;
  const std::size_t count = static_cast<std::size_t>(n), total = count * 8;
  // Two stages per array: size it (the zero fill first-touches its memory, which on some VMs is
  // as slow as the disk), then fill it in blocks straight from the file, checking each block while
  // it is in cache. A second thread reads array k while this one sizes array k + 1, so the disk
  // and the page faults overlap (scripts/bin-read-speed.sh measures the effect).
  struct Stage {
    std::function<void()> size, read;
  };
  std::vector<Stage> stages;
  for_each_array(p, ids, velocities, [&](const char* name, auto& v, bool is_mass) {
    stages.push_back({[&v, count] { v.resize(count); },
                      [&v, &in, &path, name, is_mass, total] {
                        auto* bytes = reinterpret_cast<unsigned char*>(v.data());
                        for (std::size_t off = 0; off < total; off += kBlockBytes) {
                          const std::size_t len = std::min(kBlockBytes, total - off);
                          in.read(bytes + off, len, std::string("array '") + name + "'");
                          if (host_byte_order() != ByteOrder::little) swap_bytes(bytes + off, len / 8, 8);
                          check_block(path, name, is_mass, v.data() + off / 8, len / 8, off / 8);
                        }
                      }});
  });
  try {
    stages[0].size();
    for (std::size_t k = 0; k < stages.size(); ++k) {
      auto reading = std::async(std::launch::async, stages[k].read);
      if (k + 1 < stages.size()) stages[k + 1].size();
      reading.get();  // rethrows the reader's InputError
    }
  } catch (const std::bad_alloc&) {  // had been a bare "std::bad_alloc"
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.3g", double(total) * double(stages.size()) / double(1u << 30));
    throw std::runtime_error(path + ": " + std::to_string(n) + " particles need " + gib + " GiB of memory (" + std::to_string(stages.size()) +
                             " arrays of 8-byte values), more than this process could allocate");
  }
  if (const auto [i, j] = p.repeated_id(); j != 0)
    throw InputError(path, 0, "array 'id': particle " + std::to_string(j) + " has id " + std::to_string(p.id[j]) +
                                  ", already the id of particle " + std::to_string(i) + " (ids must be unique)");
  return p;
}

void write_bin(const std::string& path, const Particles& p) {
  p.check_sizes();
  if (!std::isfinite(p.time))  // the reader refuses it
    throw UsageError("cannot write " + path + ": time = " + format_double(p.time) + " is not finite");
  refuse_repeated_ids(path, p);
  const bool ids = !p.id.empty(), velocities = p.has_velocities();
  unsigned char h[kBinHeaderBytes] = {};
  std::memcpy(h, kMagic, sizeof kMagic);
  const auto L = ByteOrder::little;
  store<std::uint32_t>(h + 8, kBinVersion, L);
  store<std::uint32_t>(h + 12, static_cast<std::uint32_t>(p.dim), L);
  store<std::uint64_t>(h + 16, p.size(), L);
  store<std::uint32_t>(h + 24, (ids ? kIds : 0) | (velocities ? kVelocities : 0), L);
  store<std::uint32_t>(h + 28, 0, L);
  store<double>(h + 32, p.time, L);
  OutputFile file(path);
  file.write(h, sizeof h);
  std::vector<unsigned char> swapped;
  for_each_array(p, ids, velocities, [&](const char*, const auto& v, bool) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
    const std::size_t total = v.size() * 8;
    if (host_byte_order() == ByteOrder::little) return file.write(bytes, total);
    for (std::size_t off = 0; off < total; off += kBlockBytes) {
      const std::size_t len = std::min(kBlockBytes, total - off);
      swapped.assign(bytes + off, bytes + off + len);
      swap_bytes(swapped.data(), len / 8, 8);
      file.write(swapped.data(), len);
    }
  });
  file.commit();
}

}  // namespace nf::io
