#include "harness/results.h"

#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/errors.h"

namespace nf {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::stringstream ss(line);
  while (std::getline(ss, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::string csv_field(std::string text) {
  for (char& c : text)
    if (c == ',' || c == '\n' || c == '\r') c = ';';
  return text;
}

ResultsFile::ResultsFile(std::string path, std::vector<std::string> columns)
    : path_(std::move(path)), columns_(std::move(columns)) {
  std::ifstream in(path_);
  if (!in) return;
  std::string line;
  if (!std::getline(in, line)) return;
  std::string expected;
  for (const auto& c : columns_) expected += (expected.empty() ? "" : ",") + c;
  if (line != expected)
    throw InputError(path_, 1, "existing results file has other columns than this command writes; move it away");
  long number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::vector<std::string> row = split_csv_line(line);
    if (row.size() != columns_.size())
      throw InputError(path_, number, "row has " + std::to_string(row.size()) + " fields, the header " +
                                          std::to_string(columns_.size()));
    rows_.push_back(std::move(row));
  }
}

bool ResultsFile::contains(const std::map<std::string, std::string>& key) const {
  for (const auto& row : rows_) {
    bool match = true;
    for (std::size_t c = 0; c < columns_.size() && match; ++c) {
      const auto it = key.find(columns_[c]);
      match = it == key.end() || it->second == row[c];
    }
    if (match) return true;
  }
  return false;
}

void ResultsFile::append(const std::map<std::string, std::string>& values) {
  std::vector<std::string> row(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    const auto it = values.find(columns_[c]);
    if (it != values.end()) row[c] = csv_field(it->second);
  }
  rows_.push_back(row);
  std::string text;
  for (std::size_t c = 0; c < columns_.size(); ++c) text += (c ? "," : "") + columns_[c];
  text += '\n';
  for (const auto& r : rows_) {
    for (std::size_t c = 0; c < r.size(); ++c) text += (c ? "," : "") + r[c];
    text += '\n';
  }
  write_file_atomically(path_, text);
}

}  // namespace nf
