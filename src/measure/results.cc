#include "measure/results.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "io/output_file.h"
#include "core/errors.h"
#include "measure/context.h"

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

const std::vector<std::string>& added_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = context_columns();
    for (const char* name : {"plan_ms", "repeat", "level_rule"}) c.push_back(name);  // bench, validate
    // Multi-GPU runs: bench and validate, then bench's split of the time, then validate's check.
    for (const char* name : {"gpus", "cross_pairs", "comm_ms", "comm_share", "kernel_max_ms", "kernel_imbalance",
                             "halo_bodies", "one_gpu"})
      c.push_back(name);
    // Full methods (the far field): the order asked for and used, the accuracy, the near-field
    // kernel, the stages of an evaluation; validate's 99th percentile.
    for (const char* name : {"order", "accuracy", "p", "near_kernel", "lists_ms", "upward_ms", "m2l_ms", "downward_ms",
                             "near_ms", "p99_rel"})
      c.push_back(name);
    // bench: a full method's operation counts per stage (farfield/op_counts.h).
    for (const char* name : {"upward_madds", "m2l_translations", "m2l_madds", "downward_madds", "near_pairs"})
      c.push_back(name);
    c.push_back("sample");     // validate --sample: the targets compared (empty: every particle)
    c.push_back("processes");  // nearfield-mpi: the MPI processes an evaluation was spread over
    c.push_back("leaf_size");  // adaptive full methods: the leaf size S (tree/adaptive.h)
    c.push_back("leaf_rule");  // and "auto" where S came from the rule (methods/full_level_rule.h)
    c.push_back("domain");     // bench, validate: --domain as given (empty: each input's default)
    c.push_back("generator");  // and a generated input's non-default --mass, --clusters, --jitter
    // Full methods with --order-sample: the targets that chose the order, and the search's time.
    c.push_back("order_sample");
    c.push_back("order_search_ms");
    return c;
  }();
  return columns;
}

std::string added_column_default(const std::string& column) {
  // Every row written before multi-GPU runs used one GPU, before nearfield-mpi rows one process.
  return column == "gpus" || column == "processes" ? "1" : "";
}

namespace {

// An exclusive advisory lock (flock) on the folder that holds a results file, held while a row is
// added: two runs appending to one file (two `experiment` commands on one results folder) had each
// rewritten the file from the rows it had read at its start, and one run's rows were lost. A
// folder is locked, not the file, because the file is replaced by a rename at each write; nothing
// is left behind. Where the folder cannot be opened, no lock (the write proceeds as before).
class FolderLock {
 public:
  explicit FolderLock(const std::string& file) {
    std::string dir = std::filesystem::path(file).parent_path().string();
    if (dir.empty()) dir = ".";
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~FolderLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

ResultsFile::ResultsFile(std::string path, std::vector<std::string> columns)
    : path_(std::move(path)), columns_(std::move(columns)) {
  check_output_path(path_);
  streamed_ = resolve_output(path_).kind == OutputKind::stream;
  if (!streamed_) read();  // never read a device or a FIFO
}

void ResultsFile::read() {
  rows_.clear();
  std::ifstream in(path_);
  if (!in) return;
  std::string line;
  if (!std::getline(in, line)) return;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = split_csv_line(line);
  const auto has = [](const std::vector<std::string>& v, const std::string& c) {
    return std::find(v.begin(), v.end(), c) != v.end();
  };
  for (const std::string& c : columns_)
    if (!has(header, c) && !has(added_columns(), c))
      throw InputError(path_, 1, "existing results file has no column '" + c +
                                     "' (it was written by another command); move it away");
  for (const std::string& c : header)
    if (!has(columns_, c)) columns_.push_back(c);
  // Where each of our columns sits in the file's rows (-1: absent in this file).
  std::vector<long> from(columns_.size(), -1);
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    const auto it = std::find(header.begin(), header.end(), columns_[c]);
    if (it != header.end()) from[c] = it - header.begin();
  }
  long number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> fields = split_csv_line(line);
    if (fields.size() != header.size())
      throw InputError(path_, number, "row has " + std::to_string(fields.size()) + " fields, the header " +
                                          std::to_string(header.size()));
    std::vector<std::string> row(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c)
      row[c] = from[c] >= 0 ? fields[static_cast<std::size_t>(from[c])] : added_column_default(columns_[c]);
    rows_.push_back(std::move(row));
  }
}

ResultsFile::~ResultsFile() {
  if (!stream_) return;
  try {
    stream_->commit();
  } catch (const std::exception&) {
    // Every row was written (and checked) when it came; closing a stream loses nothing.
  }
}

bool ResultsFile::matches(const std::vector<std::string>& row, const std::map<std::string, std::string>& key) const {
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    const auto it = key.find(columns_[c]);
    if (it != key.end() && csv_field(it->second) != row[c]) return false;
  }
  return true;
}

bool ResultsFile::contains(const std::map<std::string, std::string>& key) const {
  return std::any_of(rows_.begin(), rows_.end(), [&](const auto& row) { return matches(row, key); });
}

std::map<std::string, std::string> ResultsFile::find(const std::map<std::string, std::string>& key) const {
  std::map<std::string, std::string> out;
  for (auto row = rows_.rbegin(); row != rows_.rend(); ++row)
    if (matches(*row, key)) {
      for (std::size_t c = 0; c < columns_.size() && c < row->size(); ++c) out[columns_[c]] = (*row)[c];
      break;
    }
  return out;
}

void ResultsFile::add(const std::map<std::string, std::string>& values) {
  std::vector<std::string> row(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    const auto it = values.find(columns_[c]);
    if (it != values.end()) row[c] = csv_field(it->second);
  }
  rows_.push_back(row);
  write();
}

void ResultsFile::append(const std::map<std::string, std::string>& values) {
  if (streamed_) {
    add(values);
    return;
  }
  const FolderLock lock(path_);
  read();  // the rows another run added since
  add(values);
}

std::size_t ResultsFile::replace(const std::map<std::string, std::string>& key,
                                 const std::map<std::string, std::string>& row) {
  std::unique_ptr<FolderLock> lock;
  if (!streamed_) {
    lock = std::make_unique<FolderLock>(path_);
    read();  // the rows another run added since
  }
  const std::size_t before = rows_.size();
  rows_.erase(std::remove_if(rows_.begin(), rows_.end(), [&](const auto& r) { return matches(r, key); }), rows_.end());
  const std::size_t removed = before - rows_.size();
  add(row);
  return removed;
}

void ResultsFile::write() {
  const auto line = [](const std::vector<std::string>& fields) {
    std::string text;
    for (std::size_t c = 0; c < fields.size(); ++c) text += (c ? "," : "") + fields[c];
    return text + '\n';
  };
  if (streamed_) {  // the header once, then the newest row
    std::string text = stream_ ? "" : line(columns_);
    if (!stream_) stream_ = std::make_unique<OutputFile>(path_);
    stream_->write(text + line(rows_.back()));
    return;
  }
  std::string text = line(columns_);
  for (const auto& r : rows_) text += line(r);
  write_output_file(path_, text);
}

}  // namespace nf
