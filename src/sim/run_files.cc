#include "sim/run_files.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/output_file.h"
#include "core/errors.h"
#include "core/numbers.h"

namespace nf::sim {
namespace {

std::string numbered(const char* prefix, std::uint64_t step, const char* ext) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%06llu.%s", prefix, static_cast<unsigned long long>(step), ext);
  return name;
}

const char* const kColumns = "step,time,kinetic,potential,total,rel_energy_error,px,py,pz,force_model";

}  // namespace

std::string snapshot_name(std::uint64_t step, io::FileFormat f) { return numbered("snap", step, io::to_string(f)); }
std::string frame_name(std::uint64_t step) { return numbered("frame", step, "png"); }

std::vector<std::uint64_t> snapshot_steps(const std::string& dir, io::FileFormat f) {
  std::vector<std::uint64_t> steps;
  std::error_code ec;
  const std::string suffix = std::string(".") + io::to_string(f);
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= 5 + suffix.size() || name.compare(0, 5, "snap_") != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = name.substr(5, name.size() - 5 - suffix.size());
    std::int64_t step = 0;
    if (digits.size() >= 6 && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        parse_int64(digits, step))
      steps.push_back(static_cast<std::uint64_t>(step));
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

void RunDescription::set(const std::string& key, const std::string& value) {
  for (auto& e : entries_)
    if (e.first == key) {
      e.second = value;
      return;
    }
  entries_.emplace_back(key, value);
}

std::string RunDescription::get(const std::string& key) const {
  for (const auto& e : entries_)
    if (e.first == key) return e.second;
  return "";
}

bool RunDescription::has(const std::string& key) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
}

void RunDescription::write(const std::string& path) const {
  std::string text = "# nearfield simulate: what this run is. --resume refuses to continue it with other settings.\n";
  for (const auto& [k, v] : entries_) text += k + " = " + v + "\n";
  write_output_file(path, text);
}

RunDescription RunDescription::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot be read");
  RunDescription d;
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const auto eq = t.find('=');
    if (eq == std::string::npos || trim(t.substr(0, eq)).empty())
      throw InputError(path, number, "expected 'key = value', found '" + t + "'");
    d.set(trim(t.substr(0, eq)), trim(t.substr(eq + 1)));
  }
  return d;
}

EnergyLog::EnergyLog(std::string path, std::vector<std::string> comments, std::string force_model, bool subsampled)
    : path_(std::move(path)), force_model_(std::move(force_model)), comments_(std::move(comments)),
      subsampled_(subsampled) {}

void EnergyLog::load(std::uint64_t before) {
  rows_.clear();
  if (before == 0) return;
  for (const EnergyRow& r : read_energy_csv(path_))
    if (r.step < before) rows_.push_back(r);
  if (rows_.empty() || rows_.front().step != 0)
    throw InputError(path_, 0, "has no row for step 0 (its total energy E0 is what rel_energy_error refers to)");
}

void EnergyLog::add(EnergyRow r) {
  r.total = r.kinetic + r.potential;
  const double e0 = rows_.empty() ? r.total : rows_.front().total;
  // E0 = 0 (one particle at rest, no mass, coincident points with eps = 0): the error itself, not
  // a division by zero into NaN.
  r.rel_energy_error = e0 != 0 ? (r.total - e0) / std::fabs(e0) : r.total - e0;
  rows_.push_back(r);
  write();
}

void EnergyLog::write() const {
  std::string text;
  for (const std::string& c : comments_) text += "# " + c + "\n";
  text += std::string(kColumns) + (subsampled_ ? ",force_rel_error" : "") + "\n";
  for (const EnergyRow& r : rows_) {
    text += std::to_string(r.step);
    for (double v : {r.time, r.kinetic, r.potential, r.total, r.rel_energy_error, r.px, r.py, r.pz}) {
      text += ',';
      append_double(text, v);
    }
    text += "," + force_model_;
    if (subsampled_) {
      text += ',';
      append_double(text, r.force_rel_error);
    }
    text += '\n';
  }
  write_output_file(path_, text);
}

std::vector<EnergyRow> read_energy_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot be read");
  std::vector<EnergyRow> rows;
  std::string line;
  bool header = false, with_error = false;
  for (long number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line.rfind(kColumns, 0) != 0) throw InputError(path, number, "expected the header " + std::string(kColumns));
      with_error = line.find(",force_rel_error") != std::string::npos;
      header = true;
      continue;
    }
    std::vector<std::string> f;
    std::size_t start = 0;
    for (;;) {
      const auto comma = line.find(',', start);
      f.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    const std::size_t expected = with_error ? 11 : 10;
    if (f.size() != expected)
      throw InputError(path, number, std::to_string(f.size()) + " fields, expected " + std::to_string(expected));
    EnergyRow r;
    std::int64_t step = 0;
    double* values[] = {&r.time, &r.kinetic, &r.potential, &r.total, &r.rel_energy_error, &r.px, &r.py, &r.pz};
    bool ok = parse_int64(f[0], step) && step >= 0;
    for (int k = 0; k < 8; ++k) ok = ok && parse_double(f[k + 1], *values[k]);
    if (with_error) ok = ok && parse_double(f[10], r.force_rel_error);
    if (!ok) throw InputError(path, number, "a field is not a number: '" + line + "'");
    r.step = static_cast<std::uint64_t>(step);
    rows.push_back(r);
  }
  if (!header) throw InputError(path, 0, "has no header line");
  return rows;
}

}  // namespace nf::sim
