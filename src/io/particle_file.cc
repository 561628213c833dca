#include "io/particle_file.h"

#include <algorithm>
#include <cctype>

#include "io/csv_file.h"
#include "core/errors.h"
#include "io/bin_file.h"
#include "io/input_path.h"
#include "io/table.h"
#include "io/tipsy.h"

namespace nf::io {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ids_are_row_numbers(const Particles& p) {
  for (std::size_t i = 0; i < p.id.size(); ++i)
    if (p.id[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

bool float32_exact(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double d) { return static_cast<double>(static_cast<float>(d)) == d; });
}

}  // namespace

const char* to_string(FileFormat f) {
  switch (f) {
    case FileFormat::csv: return "csv";
    case FileFormat::tipsy: return "tipsy";
    case FileFormat::table: return "tab";
    case FileFormat::bin: return "bin";
  }
  return "?";
}

const char* file_format_names() { return "csv, tipsy, tab, bin"; }

FileFormat parse_file_format(const std::string& name) {
  const std::string n = lower(name);
  if (n == "csv") return FileFormat::csv;
  if (n == "tipsy" || n == "std") return FileFormat::tipsy;
  if (n == "tab" || n == "table" || n == "dubinski" || n == "dat" || n == "txt") return FileFormat::table;
  if (n == "bin") return FileFormat::bin;
  throw UsageError("unknown file format '" + name + "' (expected one of: " + file_format_names() + ")");
}

std::string extension_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/'), dot = path.find_last_of('.');
  return dot == std::string::npos || (slash != std::string::npos && dot < slash) ? std::string()
                                                                                 : lower(path.substr(dot + 1));
}

std::optional<FileFormat> known_file_format(const std::string& path) {
  const std::string ext = extension_of(path);
  if (ext == "csv") return FileFormat::csv;
  if (ext == "tipsy" || ext == "std") return FileFormat::tipsy;
  if (ext == "tab" || ext == "dat" || ext == "txt") return FileFormat::table;
  if (ext == "bin") return FileFormat::bin;
  return std::nullopt;
}

FileFormat file_format_of(const std::string& path) {
  if (const auto f = known_file_format(path)) return *f;
  throw UsageError("cannot tell the format of '" + path + "' from its extension (known: .csv, .tipsy, .std, .tab, " +
                   ".dat, .txt, .bin); name it with --format (a file written) or --input-format (a file read): " +
                   file_format_names());
}

FileFormat resolve_file_format(const std::string& path, const std::string& format_name) {
  return format_name.empty() ? file_format_of(path) : parse_file_format(format_name);
}

Particles read_particles(const std::string& path, const std::string& format_name) {
  check_input_path(path);  // a folder or a missing file says so, not that its extension is unknown
  return read_particles(path, resolve_file_format(path, format_name));
}

Particles read_particles(const std::string& path, FileFormat f) {
  check_input_path(path);
  switch (f) {
    case FileFormat::csv: return read_particles_csv(path);
    case FileFormat::tipsy: return read_tipsy(path);
    case FileFormat::table: return read_table(path);
    case FileFormat::bin: return read_bin(path);
  }
  throw std::logic_error("read_particles: unknown format");
}

void write_particles(const std::string& path, const Particles& p, const std::string& format_name) {
  write_particles(path, p, resolve_file_format(path, format_name));
}

void write_particles(const std::string& path, const Particles& p, FileFormat f) {
  switch (f) {
    case FileFormat::csv: return write_particles_csv(path, p);
    case FileFormat::tipsy: return write_tipsy(path, p);
    case FileFormat::table: return write_table(path, p);
    case FileFormat::bin: return write_bin(path, p);
  }
  throw std::logic_error("write_particles: unknown format");
}

std::vector<std::string> fields_not_stored(const Particles& p, FileFormat f) {
  std::vector<std::string> lost;
  if (f == FileFormat::bin) return lost;
  if (f != FileFormat::csv && !ids_are_row_numbers(p)) lost.emplace_back("ids");
  if (p.time != 0.0 && f != FileFormat::tipsy) lost.emplace_back("time");
  // A table says its dimension by its columns: with no rows it reads back as 3D.
  if (f == FileFormat::table && p.dim == 2 && p.size() == 0) lost.emplace_back("2D (an empty table reads as 3D)");
  if (f == FileFormat::tipsy) {
    bool exact = true;  // the header keeps time as float64
    for (const auto* v : {&p.x, &p.y, &p.z, &p.m, &p.vx, &p.vy, &p.vz}) exact = exact && float32_exact(*v);
    if (!exact) lost.emplace_back("float64 precision (Tipsy stores float32)");
    const auto zero = [](const std::vector<double>& v) {
      return std::all_of(v.begin(), v.end(), [](double d) { return d == 0.0; });
    };
    if (p.has_velocities() && zero(p.vx) && zero(p.vy) && zero(p.vz))
      lost.emplace_back("velocities (all zero: they read back as absent)");
  }
  return lost;
}

std::string storage_note(const std::string& path, const Particles& p, FileFormat f) {
  const auto lost = fields_not_stored(p, f);
  if (lost.empty()) return "";
  std::string s = "note: " + path + " (" + to_string(f) + ") does not store: ";
  for (std::size_t i = 0; i < lost.size(); ++i) s += (i ? ", " : "") + lost[i];
  return s + "\n";
}

}  // namespace nf::io
