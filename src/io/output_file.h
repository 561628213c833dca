#pragma once
//! Output files that never destroy what their name points at (docs/design.md §6).
//!
//! What a name is decides how it is written:
//! - a regular file, or a name that does not exist yet: a temporary file in the same folder
//!   (`NAME.tmp.PID.N`), renamed over the name when complete, so a failure or an interrupted run
//!   never leaves a half-written file under the final name; a replaced file keeps its permissions;
//! - `-` (and /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N): the descriptor the process
//!   already holds, written in place (so `> file` and `>> file` in a shell keep their meaning);
//! - anything else that exists (a character device such as /dev/null, a FIFO): opened and
//!   written in place, as a stream;
//! - a symbolic link: followed, link by link; what it points at is written by the rules above, the
//!   link itself stays.
//! Temporary files are removed when a signal ends the process (io/temp_files.h). Errors name the
//! path as the user gave it, never the temporary one: a name that cannot be written is an
//! InputError (the command exits 2, before any work when it was checked first), a failure while
//! writing (a full disk, /dev/full, a reader that went away) a runtime error (exit 3).

#include <cstddef>
#include <string>

namespace nf {

//! How an output name is written.
enum class OutputKind {
  replace,  //!< temporary file in the same folder, renamed over the name
  stream,   //!< written in place (device, FIFO, an open descriptor)
};

//! An output name, resolved.
struct OutputTarget {
  std::string path;    //!< as given: every message names this
  std::string target;  //!< symbolic links followed: the name replaced or opened
  OutputKind kind = OutputKind::replace;
  int fd = -1;         //!< a descriptor the name stands for ("-": 1), else -1
};

//! Resolves `path` (links followed); throws InputError for an empty name, a folder, a folder
//! that does not exist or is not one, or a loop of links. Opens nothing.
OutputTarget resolve_output(const std::string& path);
//! True for `-`, /dev/stdout, /dev/fd/1 and /proc/self/fd/1: the data goes to standard output,
//! so a command's messages must go to standard error.
bool writes_to_standard_output(const std::string& path);

//! Throws InputError naming `path` when it cannot be written: resolve_output's refusals, and a
//! folder where no file can be created (tried with a temporary file, removed at once), a closed
//! descriptor, or a device or FIFO this process may not write. Commands call it before any work,
//! so a typo in an output path costs nothing. Never opens a FIFO (that would wait for a reader).
void check_output_path(const std::string& path);
//! The same, and refuses an output that is the file `input` (by path or link: the particles read
//! would be replaced by the command's output; `forces --input p.csv --output p.csv` had been).
void check_output_path(const std::string& path, const std::string& input);

//! Throws InputError naming `dir` unless it is a folder where files can be created, or can be
//! made one: the nearest existing folder above it must allow creating entries (tried as above).
void check_output_folder(const std::string& dir);
//! Creates `dir` and its parents as needed; InputError naming `dir` on failure.
void create_output_folder(const std::string& dir);

//! create_output_folder for a run that may still be refused: unless keep() is called, the
//! destructor removes the folders it made again while they hold no file (a refused experiment
//! had left an empty results folder). An empty `dir` makes nothing.
class MadeFolder {
 public:
  explicit MadeFolder(const std::string& dir);
  ~MadeFolder();
  MadeFolder(const MadeFolder&) = delete;
  MadeFolder& operator=(const MadeFolder&) = delete;
  void keep() { made_.clear(); }

 private:
  std::string made_;  // the outermost folder this made ("" : none)
};

//! One output being written: `write` appends, `commit` completes it (a replaced name: flushed to
//! disk and renamed; a stream: closed). Destroying it without commit removes the temporary file
//! (a stream keeps what was written).
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const std::string& text);
  //! Appends `bytes` raw bytes (binary formats write their arrays straight from memory).
  void write(const void* data, std::size_t bytes);
  void commit();
  const std::string& path() const { return t_.path; }
  //! How the name is written (tests, and results files that append to a stream).
  OutputKind kind() const { return t_.kind; }

 private:
  void discard() noexcept;

  OutputTarget t_;
  std::string tmp_;  //!< the temporary name (replace only)
  int fd_ = -1;
  int slot_ = -1;    //!< io/temp_files.h registration of tmp_
};

//! Writes `text` to `path` by OutputFile's rules.
void write_output_file(const std::string& path, const std::string& text);

//! True: this process writes no files (an MPI rank other than 0, which computes with the others
//! while rank 0 writes: docs/design.md §15). Every OutputFile then writes to /dev/null, and the
//! output checks and folder creation do nothing (rank 0's checks are the ones that count).
void set_outputs_discarded(bool discarded);
bool outputs_discarded();

}  // namespace nf
