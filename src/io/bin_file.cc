#include "io/bin_file.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "io/byte_order.h"
#include "io/input_file.h"

namespace nf::io {
namespace {

constexpr unsigned char kMagic[8] = {'N', 'F', 'B', 'I', 'N', '\r', '\n', 0x1a};
constexpr std::uint32_t kIds = 1, kVelocities = 2;

// Arrays are read in blocks of this many bytes and checked while the block is still in cache;
// 4 MiB keeps read(2) overhead negligible (measured: larger blocks gave no more throughput).
constexpr std::size_t kBlockBytes = std::size_t(4) << 20;

// One stored array: its name in messages, where it lives in memory, how its values are checked.
template <class Ptr>
struct Array {
  const char* name;
  Ptr data;  // double* or std::int64_t*, as void* (or const void* when writing)
  bool is_id, is_mass;
};

// The arrays in file order (the layout in bin_file.h).
template <class P, class Ptr = std::conditional_t<std::is_const_v<P>, const void*, void*>>
std::vector<Array<Ptr>> arrays_of(P& p, bool ids, bool velocities) {
  std::vector<Array<Ptr>> a = {{"x", p.x.data(), false, false}, {"y", p.y.data(), false, false}};
  if (p.dim == 3) a.push_back({"z", p.z.data(), false, false});
  a.push_back({"m", p.m.data(), false, true});
  if (ids) a.push_back({"id", p.id.data(), true, false});
  if (velocities) {
    a.push_back({"vx", p.vx.data(), false, false});
    a.push_back({"vy", p.vy.data(), false, false});
    if (p.dim == 3) a.push_back({"vz", p.vz.data(), false, false});
  }
  return a;
}

std::string describe(int dim, std::uint64_t n, bool ids, bool velocities) {
  std::string s = "dim " + std::to_string(dim) + ", N = " + std::to_string(n);
  if (ids) s += ", ids";
  if (velocities) s += ", velocities";
  return s;
}

template <class A>
void check_block(const std::string& path, const A& a, const double* v, std::size_t count, std::size_t first) {
  for (std::size_t i = 0; i < count; ++i)
    if (a.is_mass ? bad_mass(v[i]) : bad_value(v[i]))
      throw_bad_value(path, "particle " + std::to_string(first + i), a.name, v[i]);
}

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
      Particles names;
      names.dim = int(dim);
      const auto a = arrays_of(names, ids, velocities);
      const std::uint64_t k = payload / (8 * n), i = (payload % (8 * n)) / 8;
      msg += ": array '" + std::string(a[k].name) + "' ends after " + std::to_string(i) + " of its " +
             std::to_string(n) + " values";
    }
    throw InputError(path, 0, msg);
  }
  if (n > std::numeric_limits<std::size_t>::max() / 8) throw InputError(path, 0, "too many particles for memory");

  Particles p;
  p.dim = int(dim);
  p.time = time;
  if (ids) p.id.resize(1);  // resize() sizes only the arrays that are present
  if (velocities) p.vx.resize(1);
  p.resize(static_cast<std::size_t>(n));
  for (const auto& a : arrays_of(p, ids, velocities)) {
    auto* bytes = static_cast<unsigned char*>(a.data);
    const std::size_t total = static_cast<std::size_t>(n) * 8;
    for (std::size_t off = 0; off < total; off += kBlockBytes) {
      const std::size_t len = std::min(kBlockBytes, total - off);
      in.read(bytes + off, len, std::string("array '") + a.name + "'");
      if (host_byte_order() != ByteOrder::little) swap_bytes(bytes + off, len / 8, 8);
      if (!a.is_id) check_block(path, a, reinterpret_cast<const double*>(bytes + off), len / 8, off / 8);
    }
  }
  return p;
}

void write_bin(const std::string& path, const Particles& p) {
  p.check_sizes();
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
  AtomicFile file(path);
  file.write(h, sizeof h);
  std::vector<unsigned char> swapped;
  for (const auto& a : arrays_of(p, ids, velocities)) {
    const std::size_t total = p.size() * 8;
    if (host_byte_order() == ByteOrder::little) {
      file.write(a.data, total);
      continue;
    }
    for (std::size_t off = 0; off < total; off += kBlockBytes) {
      const std::size_t len = std::min(kBlockBytes, total - off);
      swapped.assign(static_cast<const unsigned char*>(a.data) + off, static_cast<const unsigned char*>(a.data) + off + len);
      swap_bytes(swapped.data(), len / 8, 8);
      file.write(swapped.data(), len);
    }
  }
  file.commit();
}

}  // namespace nf::io
