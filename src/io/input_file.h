#pragma once
//! A particle file opened for reading, with the checks every reader shares: errors name the file,
//! bulk reads go straight into the caller's memory, and values are checked as they arrive.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/input_path.h"

namespace nf::io {

//! A file read front to back with read(2); every failure is an InputError naming the file.
class InputFile {
 public:
  //! Opens `path`; throws InputError if it cannot be opened or is not a regular file.
  explicit InputFile(std::string path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  //! Size in bytes when opened.
  std::uint64_t size() const { return size_; }
  //! Bytes consumed so far.
  std::uint64_t position() const { return position_; }
  const std::string& path() const { return path_; }
  //! Reads exactly `bytes` bytes into `dst`; `what` names them in the error if the file ends first
  //! (readers check the size up front, so this only fires when the file changes under them).
  void read(void* dst, std::size_t bytes, const std::string& what);
  //! The whole rest of the file.
  std::string read_rest();

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0, position_ = 0;
};

//! True for a value no reader accepts (NaN, inf).
inline bool bad_value(double v) { return !std::isfinite(v); }
//! True for a mass no reader accepts (NaN, inf, negative).
inline bool bad_mass(double m) { return bad_value(m) || m < 0.0; }
//! Throws the InputError for a bad value: "file: where: NAME = nan is not finite", or for a finite
//! one (only a mass can be bad and finite) "file: where: negative mass -1".
//! Readers test with bad_value/bad_mass first, so the message is only built on failure.
[[noreturn]] void throw_bad_value(const std::string& file, const std::string& where, const char* name, double v);

}  // namespace nf::io
