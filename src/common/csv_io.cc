#include "common/csv_io.h"

#include <limits>  // libfccp/csv.h uses std::numeric_limits without including it

#define CSV_IO_NO_THREAD  // the reader's prefetch thread buys nothing for files this size
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"  // its error type copies file names with strncpy
#include <libfccp/csv.h>
#pragma GCC diagnostic pop

#include <cmath>
#include <fstream>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/numbers.h"

namespace nf {
namespace {

using Reader = io::CSVReader<9, io::trim_chars<' ', '\t', '\r'>, io::double_quote_escape<',', '"'>>;
enum Column { kX, kY, kZ, kM, kMass, kId, kVx, kVy, kVz };
const char* const kNames[9] = {"x", "y", "z", "m", "mass", "id", "vx", "vy", "vz"};

double number(const char* text, const std::string& file, long line, Column c) {
  double v = 0.0;
  if (text == nullptr || *text == '\0')
    throw InputError(file, line, std::string("column '") + kNames[c] + "' is empty");
  if (!parse_double(text, v))
    throw InputError(file, line, std::string("column '") + kNames[c] + "': '" + text + "' is not a number");
  if (!std::isfinite(v))
    throw InputError(file, line, std::string("column '") + kNames[c] + "': '" + text + "' is not finite (NaN/inf)");
  return v;
}

}  // namespace

Particles read_particles_csv(const std::string& path) {
  {
    std::ifstream probe(path);
    if (!probe) throw InputError(path, 0, "cannot open file");
    if (probe.peek() == std::ifstream::traits_type::eof()) throw InputError(path, 0, "empty file (no header row)");
  }
  Particles p;
  try {
    Reader in(path);
    in.read_header(io::ignore_extra_column | io::ignore_missing_column, "x", "y", "z", "m", "mass", "id", "vx", "vy",
                   "vz");
    bool has[9];
    for (int c = 0; c < 9; ++c) has[c] = in.has_column(kNames[c]);
    for (Column c : {kX, kY})
      if (!has[c]) throw InputError(path, 1, std::string("missing column '") + kNames[c] + "' in the header");
    if (!has[kM] && !has[kMass]) throw InputError(path, 1, "missing column 'm' (or 'mass') in the header");
    if (has[kM] && has[kMass]) throw InputError(path, 1, "both 'm' and 'mass' columns present: keep one");
    p.dim = has[kZ] ? 3 : 2;
    const bool velocities = has[kVx] || has[kVy] || has[kVz];
    if (velocities && !(has[kVx] && has[kVy] && (p.dim == 2 || has[kVz])))
      throw InputError(path, 1, p.dim == 3 ? "velocity columns need all of vx, vy, vz" : "velocity columns need vx and vy");

    char* f[9];
    for (;;) {
      for (auto& c : f) c = nullptr;
      if (!in.read_row(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8])) break;
      const long line = static_cast<long>(in.get_file_line());
      p.x.push_back(number(f[kX], path, line, kX));
      p.y.push_back(number(f[kY], path, line, kY));
      if (p.dim == 3) p.z.push_back(number(f[kZ], path, line, kZ));
      const Column mc = has[kM] ? kM : kMass;
      const double mass = number(f[mc], path, line, mc);
      if (mass < 0.0) throw InputError(path, line, std::string("column '") + kNames[mc] + "': negative mass " + f[mc]);
      p.m.push_back(mass);
      if (has[kId]) {
        std::int64_t id = 0;
        if (f[kId] == nullptr || !parse_int64(f[kId], id))
          throw InputError(path, line, std::string("column 'id': '") + (f[kId] ? f[kId] : "") + "' is not an integer");
        p.id.push_back(id);
      }
      if (velocities) {
        p.vx.push_back(number(f[kVx], path, line, kVx));
        p.vy.push_back(number(f[kVy], path, line, kVy));
        if (p.dim == 3) p.vz.push_back(number(f[kVz], path, line, kVz));
      }
    }
  } catch (const io::error::base& e) {
    // The parser's own errors (short rows, too many fields, duplicated header names, ...) already
    // name the file and the line.
    throw InputError(e.what());
  }
  return p;
}

void write_particles_csv(const std::string& path, const Particles& p) {
  const bool ids = !p.id.empty(), vel = p.has_velocities();
  std::string out = p.dim == 3 ? "x,y,z,m" : "x,y,m";
  if (ids) out += ",id";
  if (vel) out += p.dim == 3 ? ",vx,vy,vz" : ",vx,vy";
  out += '\n';
  AtomicFile file(path);
  for (std::size_t i = 0; i < p.size(); ++i) {
    append_double(out, p.x[i]);
    out += ',';
    append_double(out, p.y[i]);
    out += ',';
    if (p.dim == 3) {
      append_double(out, p.z[i]);
      out += ',';
    }
    append_double(out, p.m[i]);
    if (ids) out += ',' + std::to_string(p.id[i]);
    if (vel) {
      out += ',';
      append_double(out, p.vx[i]);
      out += ',';
      append_double(out, p.vy[i]);
      if (p.dim == 3) {
        out += ',';
        append_double(out, p.vz[i]);
      }
    }
    out += '\n';
    if (out.size() > (1u << 20)) {
      file.write(out);
      out.clear();
    }
  }
  file.write(out);
  file.commit();
}

void write_accelerations_csv(const std::string& path, const Particles& p, const std::vector<double>& acc) {
  const int d = p.dim;
  if (acc.size() != p.size() * static_cast<std::size_t>(d))
    throw std::logic_error("write_accelerations_csv: " + std::to_string(acc.size()) + " values for " +
                           std::to_string(p.size()) + " particles");
  std::string out = d == 3 ? "id,ax,ay,az\n" : "id,ax,ay\n";
  AtomicFile file(path);
  for (std::size_t i = 0; i < p.size(); ++i) {
    out += std::to_string(p.id_of(i));
    for (int a = 0; a < d; ++a) {
      out += ',';
      append_double(out, acc[i * d + a]);
    }
    out += '\n';
    if (out.size() > (1u << 20)) {
      file.write(out);
      out.clear();
    }
  }
  file.write(out);
  file.commit();
}

}  // namespace nf
