#pragma once
//! Results CSV files: a fixed header, one row per measured point, context in columns
//! (docs/design.md §6). Rows are appended by rewriting the file under a temporary name and
//! renaming it, so an interrupted sweep leaves a complete file holding the rows it finished, and a
//! rerun can skip them. Each added row is written under an advisory lock on the file's folder, after
//! reading the file again, so that runs appending to one file at once keep each other's rows. A name that is not a file (`-`, /dev/null, a FIFO) gets the header and
//! then each row as it comes, and nothing is read from it.

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nf {

class OutputFile;

//! One results file, loaded when it exists.
class ResultsFile {
 public:
  //! Opens (or prepares to create) `path` for rows with these columns. An existing file written
  //! by an older version may lack the columns added since (added_columns()): its rows read as
  //! added_column_default() there (empty, or 1 for gpus), and the file is rewritten with the full
  //! header (its own extra columns kept at the end). A file lacking any other column (another
  //! command's file) is refused (InputError), never overwritten. A path whose folder does not
  //! exist is refused before any work.
  ResultsFile(std::string path, std::vector<std::string> columns);
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  //! True when a row agrees with `key` on every column `key` names.
  bool contains(const std::map<std::string, std::string>& key) const;
  //! The last row agreeing with `key` on every column `key` names, as column -> value (empty
  //! when there is none).
  std::map<std::string, std::string> find(const std::map<std::string, std::string>& key) const;
  //! Appends a row (columns missing from `row` are left empty) and rewrites the file (a stream:
  //! writes the row).
  void append(const std::map<std::string, std::string>& row);
  //! Removes every row agreeing with `key` and appends `row`, in one rewrite (re-measuring a
  //! point); returns how many rows it replaced.
  std::size_t replace(const std::map<std::string, std::string>& key, const std::map<std::string, std::string>& row);
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  //! The file's columns: the command's, then any extra ones an existing file had.
  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& path() const { return path_; }
  //! True when the name is written as a stream (no rows read, rows appended as they come).
  bool streamed() const { return streamed_; }

 private:
  bool matches(const std::vector<std::string>& row, const std::map<std::string, std::string>& key) const;
  // The file's rows (and any extra columns) into rows_ (columns_).
  void read();
  // Appends a row to rows_ and writes the file (or the stream).
  void add(const std::map<std::string, std::string>& row);
  void write();

  std::string path_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
  bool streamed_ = false;
  std::unique_ptr<OutputFile> stream_;  //!< open once the first streamed row is written
};

//! Columns that results files of earlier versions may lack: the context columns
//! (context_columns()) and every measurement column added after the first results were
//! committed. Adding a column to a results file? List it here, so older files stay readable.
const std::vector<std::string>& added_columns();
//! The value an older file's rows take in an added column it lacks: "1" for `gpus` (those rows
//! were measured on one GPU), empty for the others.
std::string added_column_default(const std::string& column);

//! Splits one CSV line (no quoting: our fields never hold commas).
std::vector<std::string> split_csv_line(const std::string& line);

//! Quotes nothing, but replaces commas and line breaks (free text such as a device name).
std::string csv_field(std::string text);

}  // namespace nf
