#pragma once
//! Results CSV files: a fixed header, one row per measured point, context in columns
//! (DESIGN.md section 6). Rows are appended by rewriting the file under a temporary name and
//! renaming it, so an interrupted sweep leaves a complete file holding the rows it finished, and a
//! rerun can skip them.

#include <map>
#include <string>
#include <vector>

namespace nf {

//! One results file, loaded when it exists.
class ResultsFile {
 public:
  //! Opens (or prepares to create) `path` with these columns; an existing file with another
  //! header is refused (InputError), never overwritten.
  ResultsFile(std::string path, std::vector<std::string> columns);

  //! True when a row agrees with `key` on every column `key` names.
  bool contains(const std::map<std::string, std::string>& key) const;
  //! Appends a row (columns missing from `row` are left empty) and rewrites the file.
  void append(const std::map<std::string, std::string>& row);
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

//! Splits one CSV line (no quoting: our fields never hold commas).
std::vector<std::string> split_csv_line(const std::string& line);

//! Quotes nothing, but replaces commas and line breaks (free text such as a device name).
std::string csv_field(std::string text);

}  // namespace nf
