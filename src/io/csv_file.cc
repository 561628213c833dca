#include "io/csv_file.h"

#include <limits>  // libfccp/csv.h uses std::numeric_limits without including it

#define CSV_IO_NO_THREAD  // the reader's prefetch thread buys nothing for files this size
#if defined(__GNUC__) && !defined(__clang__)  // gcc's warning (clang has none of that name)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"  // its error type copies file names with strncpy
#endif
#include <libfccp/csv.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "io/input_path.h"
#include "io/output_file.h"
#include "core/errors.h"
#include "core/numbers.h"

namespace nf {
namespace {

// Writes the text gathered so far once it passes 1 MiB, so a large file is written in pieces.
void flush_if_large(OutputFile& file, std::string& out) {
  if (out.size() > (1u << 20)) {
    file.write(out);
    out.clear();
  }
}

// Blank lines (nothing but blanks; the line reader already drops the '\r' of CRLF) are skipped
// anywhere, a trailing one included; line numbers stay those of the file.
using Reader = io::CSVReader<9, io::trim_chars<' ', '\t', '\r'>, io::double_quote_escape<',', '"'>,
                             io::throw_on_overflow, io::empty_line_comment>;
using AccReader = io::CSVReader<4, io::trim_chars<' ', '\t', '\r'>, io::double_quote_escape<',', '"'>,
                                io::throw_on_overflow, io::empty_line_comment>;
enum Column { kX, kY, kZ, kM, kMass, kId, kVx, kVy, kVz };
const char* const kNames[9] = {"x", "y", "z", "m", "mass", "id", "vx", "vy", "vz"};

double number(const char* text, const std::string& file, long line, const char* column) {
  double v = 0.0;
  if (text == nullptr || *text == '\0') throw InputError(file, line, std::string("column '") + column + "' is empty");
  if (!parse_double(text, v))
    throw InputError(file, line, std::string("column '") + column + "': '" + text + "' " + parse_failure(text, false));
  if (!std::isfinite(v))
    throw InputError(file, line, std::string("column '") + column + "': '" + text + "' is not finite (NaN/inf)");
  return v;
}
double number(const char* text, const std::string& file, long line, Column c) { return number(text, file, line, kNames[c]); }

// An id column value, unique in the file: `seen` maps ids to their lines.
std::int64_t unique_id(const char* text, const std::string& file, long line, std::unordered_map<std::int64_t, long>& seen) {
  std::int64_t id = 0;
  if (text == nullptr || !parse_int64(text, id))
    throw InputError(file, line, std::string("column 'id': '") + (text ? text : "") + "' " + parse_failure(text ? text : "", true));
  // Ids name particles in every output, so one id on two rows would make the output ambiguous.
  const auto [it, fresh] = seen.emplace(id, line);
  if (!fresh) throw InputError(file, line, "id " + std::to_string(id) + " is already the id of line " + std::to_string(it->second));
  return id;
}

// Refuses an empty or missing file before the parser sees it.
void check_readable(const std::string& path) {
  check_input_path(path);  // a folder reads as empty through a stream: say what it is
  std::ifstream probe(path);
  if (!probe) throw InputError(path, 0, "cannot open file");
  if (probe.peek() == std::ifstream::traits_type::eof()) throw InputError(path, 0, "empty file (no header row)");
}

// A NUL byte ends a line for the parser, which then reads the rest of that line as absent (a
// row that starts with one was dropped without a word, particle and all): refused, by line.
// Where a scan of a file's bytes stands between chunks: its line, and whether the last chunk ended
// in a carriage return.
struct ByteScan {
  long line = 1;
  bool cr = false;
};
// Refuses a NUL byte (binary data) and a carriage return followed by something other than a line
// feed, more carriage returns or blanks (classic Mac line endings, which the parser reads as one
// long line: "missing column" had been all it said; CR CR LF, which Python's csv module writes
// through a text-mode file on Windows, reads as CR LF). Carriage returns at the file's end end its
// last line and are let be.
void refuse_bad_bytes(const std::string& path, std::string_view text, ByteScan& at) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (at.cr && c != '\n' && c != '\r' && c != ' ' && c != '\t')
      throw InputError(path, at.line,
                       "a carriage return inside a line (old Mac line endings, or a stray CR): convert the file to LF "
                       "or CRLF line endings");
    at.cr = c == '\r' || (at.cr && (c == ' ' || c == '\t'));
    if (c == '\n') ++at.line;
    if (c == '\0') throw InputError(path, at.line, "a NUL byte (binary data in a text file)");
  }
}
void refuse_bad_bytes_in_text(const std::string& path, std::string_view text) {
  ByteScan at;
  refuse_bad_bytes(path, text, at);
}
void refuse_bad_bytes_in_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string chunk(1 << 20, '\0');
  ByteScan at;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    refuse_bad_bytes(path, std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())), at);
  }
}

// The parser's errors in this project's words ("file:line: problem"); `header_line` is the line
// of the header row (blank lines may precede it).
[[noreturn]] void rethrow_parser_error(const std::string& path, long header_line) {
  try {
    throw;
  } catch (const io::error::too_few_columns& e) {
    throw InputError(path, e.file_line, "too few fields: the row ends before the last column of the header");
  } catch (const io::error::too_many_columns& e) {
    throw InputError(path, e.file_line, "more fields than the header has columns");
  } catch (const io::error::escaped_string_not_closed& e) {
    throw InputError(path, e.file_line, "a quoted field is not closed");
  } catch (const io::error::line_length_limit_exceeded& e) {
    throw InputError(path, e.file_line, "line longer than 16 MiB");
  } catch (const io::error::duplicated_column_in_header& e) {
    throw InputError(path, header_line, std::string("column '") + e.column_name + "' appears twice in the header");
  } catch (const io::error::header_missing&) {
    throw InputError(path, 0, "no header row (only blank lines)");
  } catch (const io::error::can_not_open_file&) {
    throw InputError(path, 0, "cannot open file");
  } catch (const io::error::base& e) {
    // Every error the parser raises with our reader's settings is handled above; keep the line
    // if a future version adds another.
    const auto* with_line = dynamic_cast<const io::error::with_file_line*>(&e);
    throw InputError(path, with_line ? with_line->file_line : 0, "cannot parse this CSV row");
  }
}

// The particles of the reader that `open()` makes (of a file or of text in memory).
template <class Open>
Particles particles_from(Open open, const std::string& path) {
  Particles p;
  long header = 1;
  try {
    const std::unique_ptr<Reader> reader = open();
    Reader& in = *reader;
    try {
      in.read_header(io::ignore_extra_column | io::ignore_missing_column, "x", "y", "z", "m", "mass", "id", "vx", "vy",
                     "vz");
    } catch (const io::error::base&) {
      rethrow_parser_error(path, static_cast<long>(in.get_file_line()));
    }
    header = static_cast<long>(in.get_file_line());
    bool has[9];
    for (int c = 0; c < 9; ++c) has[c] = in.has_column(kNames[c]);
    for (Column c : {kX, kY})
      if (!has[c]) throw InputError(path, header, std::string("missing column '") + kNames[c] + "' in the header");
    if (!has[kM] && !has[kMass]) throw InputError(path, header, "missing column 'm' (or 'mass') in the header");
    if (has[kM] && has[kMass]) throw InputError(path, header, "both 'm' and 'mass' columns present: keep one");
    p.dim = has[kZ] ? 3 : 2;
    // A 2D file's vz had been dropped without a word.
    if (p.dim == 2 && has[kVz])
      throw InputError(path, header, "a 'vz' column without 'z': a 2D file has vx and vy only (add z for 3D)");
    const bool velocities = has[kVx] || has[kVy] || has[kVz];
    if (velocities && !(has[kVx] && has[kVy] && (p.dim == 2 || has[kVz])))
      throw InputError(path, header, p.dim == 3 ? "velocity columns need all of vx, vy, vz" : "velocity columns need vx and vy");

    std::unordered_map<std::int64_t, long> id_line;
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
      if (has[kId]) p.id.push_back(unique_id(f[kId], path, line, id_line));
      if (velocities) {
        p.vx.push_back(number(f[kVx], path, line, kVx));
        p.vy.push_back(number(f[kVy], path, line, kVy));
        if (p.dim == 3) p.vz.push_back(number(f[kVz], path, line, kVz));
      }
    }
  } catch (const io::error::base&) {
    rethrow_parser_error(path, header);
  }
  return p;
}

// The accelerations of the reader that `open()` makes (of a file or of text in memory).
template <class Open>
Accelerations accelerations_from(Open open, const std::string& path) {
  const char* const names[4] = {"id", "ax", "ay", "az"};
  Accelerations a;
  long header = 1;
  try {
    const std::unique_ptr<AccReader> reader = open();
    AccReader& in = *reader;
    try {
      in.read_header(io::ignore_extra_column | io::ignore_missing_column, "id", "ax", "ay", "az");
    } catch (const io::error::base&) {
      rethrow_parser_error(path, static_cast<long>(in.get_file_line()));
    }
    header = static_cast<long>(in.get_file_line());
    for (int c = 0; c < 3; ++c)
      if (!in.has_column(names[c])) throw InputError(path, header, std::string("missing column '") + names[c] + "' in the header");
    a.dim = in.has_column("az") ? 3 : 2;
    std::unordered_map<std::int64_t, long> id_line;
    char* f[4];
    for (;;) {
      for (auto& c : f) c = nullptr;
      if (!in.read_row(f[0], f[1], f[2], f[3])) break;
      const long line = static_cast<long>(in.get_file_line());
      a.id.push_back(unique_id(f[0], path, line, id_line));
      for (int d = 0; d < a.dim; ++d) a.acc.push_back(number(f[1 + d], path, line, names[1 + d]));
    }
  } catch (const io::error::base&) {
    rethrow_parser_error(path, header);
  }
  return a;
}

}  // namespace

Particles read_particles_csv(const std::string& path) {
  check_readable(path);
  refuse_bad_bytes_in_file(path);
  return particles_from([&] { return std::make_unique<Reader>(path); }, path);
}

Particles parse_particles_csv(const std::string& path, std::string_view text) {
  if (text.empty()) throw InputError(path, 0, "empty file (no header row)");
  refuse_bad_bytes_in_text(path, text);
  return particles_from([&] { return std::make_unique<Reader>(path, text.data(), text.data() + text.size()); }, path);
}

Accelerations read_accelerations_csv(const std::string& path) {
  check_readable(path);
  refuse_bad_bytes_in_file(path);
  return accelerations_from([&] { return std::make_unique<AccReader>(path); }, path);
}

Accelerations parse_accelerations_csv(const std::string& path, std::string_view text) {
  if (text.empty()) throw InputError(path, 0, "empty file (no header row)");
  refuse_bad_bytes_in_text(path, text);
  return accelerations_from([&] { return std::make_unique<AccReader>(path, text.data(), text.data() + text.size()); },
                            path);
}

void write_particles_csv(const std::string& path, const Particles& p) {
  refuse_repeated_ids(path, p);
  const bool ids = !p.id.empty(), vel = p.has_velocities();
  std::string out = p.dim == 3 ? "x,y,z,m" : "x,y,m";
  if (ids) out += ",id";
  if (vel) out += p.dim == 3 ? ",vx,vy,vz" : ",vx,vy";
  out += '\n';
  OutputFile file(path);
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
    flush_if_large(file, out);
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
  OutputFile file(path);
  for (std::size_t i = 0; i < p.size(); ++i) {
    out += std::to_string(p.id_of(i));
    for (int a = 0; a < d; ++a) {
      out += ',';
      append_double(out, acc[i * d + a]);
    }
    out += '\n';
    flush_if_large(file, out);
  }
  file.write(out);
  file.commit();
}

}  // namespace nf
