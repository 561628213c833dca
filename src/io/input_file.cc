#include "io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.h"
#include "core/numbers.h"

namespace nf {

void check_input_path(const std::string& path) {
  if (path.empty()) throw InputError("no input file name given");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "is a folder, not a file");
  if (!S_ISREG(st.st_mode))
    throw InputError(path, 0, "is not a regular file (a device or a FIFO): particle files are read from files");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  ::close(fd);
}

}  // namespace nf

namespace nf::io {

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(path_, 0, std::string("cannot open file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(path_, 0, "not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  // Readers go front to back once: tell the kernel to read ahead aggressively.
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read(void* dst, std::size_t bytes, const std::string& what) {
  auto* p = static_cast<char*>(dst);
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::read(fd_, p + done, bytes - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError(path_, 0, "read error in " + what + ": " + std::strerror(errno));
    if (got == 0)
      throw InputError(path_, 0,
                       "the file ended inside " + what + " (expected " + std::to_string(bytes) + " bytes at offset " +
                           std::to_string(position_) + ", got " + std::to_string(done) + ")");
    done += static_cast<std::size_t>(got);
    position_ += static_cast<std::uint64_t>(got);
  }
}

std::string InputFile::read_rest() {
  std::string text(static_cast<std::size_t>(size_ - position_), '\0');
  read(text.data(), text.size(), "the file");
  return text;
}

void throw_bad_value(const std::string& file, const std::string& where, const char* name, double v) {
  // The only bad finite value is a negative mass.
  if (!bad_value(v)) throw InputError(file, 0, where + ": negative mass " + format_double(v));
  throw InputError(file, 0, where + ": " + name + " = " + format_double(v) + " is not finite (NaN/inf)");
}

}  // namespace nf::io
