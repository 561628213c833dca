#pragma once
//! Output files are written under a temporary name and renamed into place when complete, so a
//! failure or an interrupted run never leaves a half-written file under the final name.

#include <cstddef>
#include <cstdio>
#include <string>

namespace nf {

//! A file being written: `write` appends, `commit` flushes, syncs and renames it to its final
//! path; destroying it without commit removes the temporary file. Errors name the final path
//! (the user's), never the temporary one: a path that cannot be created is an InputError (the
//! command exits 2), a failure while writing a runtime error.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const std::string& text);
  //! Appends `bytes` raw bytes (binary formats write their arrays straight from memory).
  void write(const void* data, std::size_t bytes);
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
};

//! Throws InputError naming `path` when it cannot become a file: its folder does not exist, is
//! not a folder, or `path` is a folder. Commands call it before any work, so a typo in an output
//! path costs nothing.
void check_output_path(const std::string& path);

//! Writes `text` to `path` atomically.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace nf
