#include "io/table.h"

#include <string_view>
#include <vector>

#include "io/output_file.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "io/input_file.h"

namespace nf::io {
namespace {

// Column names for each accepted column count (index = count); empty = not a layout.
const std::vector<std::vector<const char*>> kLayouts = {
    {}, {}, {}, {"mass", "x", "y"}, {"mass", "x", "y", "z"}, {"mass", "x", "y", "vx", "vy"}, {},
    {"mass", "x", "y", "z", "vx", "vy", "vz"}};

const char* const kLayoutHelp =
    "a table has 7 columns (mass x y z vx vy vz), 4 (mass x y z), 5 (mass x y vx vy) or 3 (mass x y)";

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Splits a line into fields at runs of blanks.
void split(const char* b, const char* e, std::vector<std::string_view>& fields) {
  fields.clear();
  while (b < e) {
    while (b < e && blank(*b)) ++b;
    const char* s = b;
    while (b < e && !blank(*b)) ++b;
    if (b > s) fields.emplace_back(s, static_cast<std::size_t>(b - s));
  }
}

}  // namespace

Particles read_table(const std::string& path) {
  InputFile in(path);
  return parse_table(path, in.read_rest());
}

Particles parse_table(const std::string& path, std::string_view text) {
  Particles p;
  p.dim = 3;
  std::size_t columns = 0;  // of the first row
  long first_row_line = 0;
  std::vector<std::string_view> f;
  const char* c = text.data();
  const char* const end = c + text.size();
  for (long line = 1; c < end; ++line) {
    const char* e = c;
    while (e < end && *e != '\n') ++e;
    split(c, e, f);
    const bool last_unterminated = e == end;
    c = e < end ? e + 1 : e;
    if (f.empty() || f[0][0] == '#') continue;
    if (columns == 0) {
      columns = f.size();
      first_row_line = line;
      if (columns >= kLayouts.size() || kLayouts[columns].empty())
        throw InputError(path, line, std::to_string(columns) + " columns; " + kLayoutHelp);
      p.dim = columns == 4 || columns == 7 ? 3 : 2;
    }
    if (f.size() != columns)
      throw InputError(path, line,
                       std::to_string(f.size()) + " columns, but the first row (line " +
                           std::to_string(first_row_line) + ") has " + std::to_string(columns) +
                           (last_unterminated && f.size() < columns ? " (the file looks truncated)" : ""));
    const auto& names = kLayouts[columns];
    double v[7];
    for (std::size_t k = 0; k < columns; ++k) {
      if (!parse_double(f[k], v[k]))
        throw InputError(path, line,
                         "column " + std::to_string(k + 1) + " (" + names[k] + "): '" + std::string(f[k]) +
                             "' is not a number");
      if (k == 0 ? bad_mass(v[k]) : bad_value(v[k]))
        throw_bad_value(path + ":" + std::to_string(line), "column " + std::to_string(k + 1), names[k], v[k]);
    }
    p.m.push_back(v[0]);
    p.x.push_back(v[1]);
    p.y.push_back(v[2]);
    if (p.dim == 3) p.z.push_back(v[3]);
    if (columns == 7) {
      p.vx.push_back(v[4]);
      p.vy.push_back(v[5]);
      p.vz.push_back(v[6]);
    } else if (columns == 5) {
      p.vx.push_back(v[3]);
      p.vy.push_back(v[4]);
    }
  }
  return p;
}

void write_table(const std::string& path, const Particles& p) {
  p.check_sizes();
  // The columns of this layout, in order (see table.h).
  std::vector<const std::vector<double>*> columns = {&p.m, &p.x, &p.y};
  if (p.dim == 3) columns.push_back(&p.z);
  if (p.has_velocities()) {
    columns.push_back(&p.vx);
    columns.push_back(&p.vy);
    if (p.dim == 3) columns.push_back(&p.vz);
  }
  OutputFile file(path);
  std::string out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out += ' ';
      append_double(out, (*columns[c])[i]);
    }
    out += '\n';
    if (out.size() > (1u << 20)) file.write(out), out.clear();
  }
  file.write(out);
  file.commit();
}

}  // namespace nf::io
