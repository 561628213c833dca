#include "io/tipsy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "io/output_file.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "io/input_file.h"

namespace nf::io {
namespace {

// The three record types in file order; every record starts with mass, pos[3], vel[3].
struct RecordType {
  const char* name;
  std::uint64_t bytes;
};
constexpr RecordType kTypes[3] = {{"gas", 48}, {"dark", 36}, {"star", 44}};
constexpr std::uint64_t kDarkBytes = 36;

// Records converted per block: 64k records (<= 3 MiB) keep the buffer in cache.
constexpr std::uint64_t kBlockRecords = 1 << 16;

struct Header {
  double time = 0.0;
  std::int32_t nbodies = 0, ndim = 0, count[3] = {0, 0, 0};
  bool plausible() const {
    return (ndim == 2 || ndim == 3) && count[0] >= 0 && count[1] >= 0 && count[2] >= 0 &&
           std::int64_t(count[0]) + count[1] + count[2] == nbodies;
  }
  std::uint64_t record_bytes() const {
    std::uint64_t b = 0;
    for (int t = 0; t < 3; ++t) b += std::uint64_t(count[t]) * kTypes[t].bytes;
    return b;
  }
  std::string describe() const {
    return "nbodies " + std::to_string(nbodies) + ", ndim " + std::to_string(ndim) + ", nsph " +
           std::to_string(count[0]) + ", ndark " + std::to_string(count[1]) + ", nstar " + std::to_string(count[2]);
  }
};

Header parse_header(const unsigned char* h, ByteOrder o) {
  Header r;
  r.time = load<double>(h, o);
  r.nbodies = load<std::int32_t>(h + 8, o);
  r.ndim = load<std::int32_t>(h + 12, o);
  for (int t = 0; t < 3; ++t) r.count[t] = load<std::int32_t>(h + 16 + 4 * t, o);
  return r;
}

// Where a file of `size` bytes ends, for a header of `header_bytes` and the counts of h:
// "the file ends 12 bytes into dark record 17 of 100 (particle index 57)".
std::string where_it_ends(const Header& h, std::uint64_t header_bytes, std::uint64_t size) {
  // A file of 28 to 31 bytes read with the 32-byte header ends inside it (found by fuzzing:
  // counting records from the header's end gave "gas record 384307168202282326 of 0").
  if (size < header_bytes)
    return "the file ends inside the " + std::to_string(header_bytes) + "-byte header, after " + std::to_string(size) +
           " of its bytes";
  std::uint64_t offset = header_bytes, first = 0;
  for (int t = 0; t < 3; ++t) {
    const std::uint64_t n = std::uint64_t(h.count[t]), bytes = kTypes[t].bytes;
    if (size < offset + n * bytes) {
      const std::uint64_t k = (size - offset) / bytes, into = (size - offset) % bytes;
      return "the file ends " + std::to_string(into) + " bytes into " + kTypes[t].name + " record " +
             std::to_string(k + 1) + " of " + std::to_string(n) + " (particle index " + std::to_string(first + k) + ")";
    }
    offset += n * bytes;
    first += n;
  }
  return "";
}

[[noreturn]] void size_mismatch(const std::string& path, const Header& h, ByteOrder o, std::uint64_t size) {
  const std::uint64_t e32 = 32 + h.record_bytes(), e28 = 28 + h.record_bytes();
  std::string msg = "truncated or inconsistent Tipsy file: the " + std::string(to_string(o)) + " header says " +
                    h.describe() + ", which needs " + std::to_string(e32) + " bytes (32-byte header) or " +
                    std::to_string(e28) + " (28-byte header), but the file is " + std::to_string(size) + " bytes";
  if (size < e32) msg += ": " + where_it_ends(h, 32, size) + " (reading the header as 32 bytes)";
  else if (size > e32) msg += ": " + std::to_string(size - e32) + " bytes more than the records need";
  throw InputError(path, 0, msg);
}

}  // namespace

Particles read_tipsy(const std::string& path, TipsyInfo* info) {
  InputFile in(path);
  const std::uint64_t size = in.size();
  if (size < 28)
    throw InputError(path, 0,
                     "truncated: " + std::to_string(size) + " bytes, shorter than a Tipsy header (28 or 32 bytes)");
  unsigned char h[32] = {};
  in.read(h, 28, "the header");
  // Which byte order? The one in which the header makes sense (at most one does in practice: a
  // 2 or 3 read in the wrong order is 2^25 or more).
  const Header big = parse_header(h, ByteOrder::big), little = parse_header(h, ByteOrder::little);
  ByteOrder order;
  if (big.plausible()) order = ByteOrder::big;
  else if (little.plausible()) order = ByteOrder::little;
  else
    throw InputError(path, 0,
                     "not a Tipsy file: the header makes no sense in either byte order (ndim must be 2 or 3 and "
                     "nsph + ndark + nstar = nbodies): big-endian " +
                         big.describe() + "; little-endian " + little.describe());
  const Header hd = order == ByteOrder::big ? big : little;
  std::uint64_t header_bytes;
  if (size == 32 + hd.record_bytes()) header_bytes = 32;
  else if (size == 28 + hd.record_bytes()) header_bytes = 28;
  else size_mismatch(path, hd, order, size);
  if (header_bytes == 32) in.read(h + 28, 4, "the header pad");
  if (bad_value(hd.time)) throw_bad_value(path, "header", "time", hd.time);

  Particles p;
  p.dim = hd.ndim;
  p.time = hd.time;
  p.vx.resize(1);  // velocities always present in the file; dropped below if all zero
  p.resize(static_cast<std::size_t>(hd.nbodies));
  std::vector<unsigned char> buf;
  std::size_t i = 0;
  bool any_velocity = false;
  for (int t = 0; t < 3; ++t) {
    const RecordType& type = kTypes[t];
    const std::uint64_t n = std::uint64_t(hd.count[t]);
    for (std::uint64_t r0 = 0; r0 < n; r0 += kBlockRecords) {
      const std::uint64_t rn = std::min(kBlockRecords, n - r0);
      buf.resize(static_cast<std::size_t>(rn * type.bytes));
      in.read(buf.data(), buf.size(), std::string(type.name) + " records " + std::to_string(r0 + 1) + ".." +
                                          std::to_string(r0 + rn));
      for (std::uint64_t r = 0; r < rn; ++r, ++i) {
        const unsigned char* rec = buf.data() + r * type.bytes;
        double v[7];
        for (int k = 0; k < 7; ++k) v[k] = load<float>(rec + 4 * k, order);
        static const char* const kNames[7] = {"mass", "x", "y", "z", "vx", "vy", "vz"};
        for (int k = 0; k < 7; ++k)
          if (k == 0 ? bad_mass(v[0]) : bad_value(v[k]))
            throw_bad_value(path,
                            std::string(type.name) + " record " + std::to_string(r0 + r + 1) + " (particle index " +
                                std::to_string(i) + ")",
                            kNames[k], v[k]);
        if (hd.ndim == 2 && (v[3] != 0.0 || v[6] != 0.0))
          throw InputError(path, 0,
                           std::string(type.name) + " record " + std::to_string(r0 + r + 1) + " (particle index " +
                               std::to_string(i) + "): ndim is 2 but z = " + format_double(v[3]) + ", vz = " +
                               format_double(v[6]) + " (2D files keep z and vz at 0)");
        p.m[i] = v[0];
        p.x[i] = v[1];
        p.y[i] = v[2];
        p.vx[i] = v[4];
        p.vy[i] = v[5];
        if (hd.ndim == 3) {
          p.z[i] = v[3];
          p.vz[i] = v[6];
        }
        any_velocity = any_velocity || v[4] != 0.0 || v[5] != 0.0 || v[6] != 0.0;
      }
    }
  }
  if (!any_velocity) p.vx.clear(), p.vy.clear(), p.vz.clear();
  if (info) {
    info->order = order;
    info->header_bytes = static_cast<int>(header_bytes);
    info->nsph = hd.count[0];
    info->ndark = hd.count[1];
    info->nstar = hd.count[2];
  }
  return p;
}

void write_tipsy(const std::string& path, const Particles& p, const TipsyWriteOptions& opt) {
  p.check_sizes();
  if (p.size() > std::size_t(std::numeric_limits<std::int32_t>::max()))
    throw UsageError("a Tipsy file holds at most 2^31 - 1 particles, not " + std::to_string(p.size()));
  const auto n = static_cast<std::int32_t>(p.size());
  const ByteOrder o = opt.order;
  unsigned char h[32] = {};
  store<double>(h, p.time, o);
  store<std::int32_t>(h + 8, n, o);
  store<std::int32_t>(h + 12, p.dim, o);
  store<std::int32_t>(h + 16, 0, o);  // nsph
  store<std::int32_t>(h + 20, n, o);  // ndark
  store<std::int32_t>(h + 24, 0, o);  // nstar
  OutputFile file(path);
  file.write(h, opt.padded_header ? 32 : 28);
  const bool vel = p.has_velocities();
  std::vector<unsigned char> buf;
  for (std::size_t r0 = 0; r0 < p.size(); r0 += kBlockRecords) {
    const std::size_t rn = std::min<std::size_t>(kBlockRecords, p.size() - r0);
    buf.assign(rn * kDarkBytes, 0);  // eps and phi stay 0
    for (std::size_t r = 0; r < rn; ++r) {
      const std::size_t i = r0 + r;
      const double v[7] = {p.m[i],
                           p.x[i],
                           p.y[i],
                           p.dim == 3 ? p.z[i] : 0.0,
                           vel ? p.vx[i] : 0.0,
                           vel ? p.vy[i] : 0.0,
                           vel && p.dim == 3 ? p.vz[i] : 0.0};
      for (int k = 0; k < 7; ++k) {
        const auto f = static_cast<float>(v[k]);
        if (!std::isfinite(f))
          throw UsageError("cannot write " + path + ": particle index " + std::to_string(i) + " has value " +
                           format_double(v[k]) + ", which does not fit a Tipsy float32");
        // A position or velocity rounded to 0 moved by less than 1e-38; a mass rounded to 0 is gone.
        if (k == 0 && f == 0.0f && v[k] != 0.0)
          throw UsageError("cannot write " + path + ": particle index " + std::to_string(i) + " has mass " +
                           format_double(v[k]) + ", which a Tipsy float32 holds as 0");
        store<float>(buf.data() + r * kDarkBytes + 4 * k, f, o);
      }
    }
    file.write(buf.data(), buf.size());
  }
  file.commit();
}

}  // namespace nf::io
