#pragma once
// The fuzzer's bytes as a file, for the readers that take a path (Tipsy, .bin): an anonymous
// memory file (memfd_create) that they open through /proc/self/fd/N like any regular file, so
// the fuzzed path is the one a user's file takes (docs/design.md §9, "Fuzzing").
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nf::fuzz {

//! An anonymous regular file holding a copy of the given bytes; closed (and gone) at destruction.
class MemoryFile {
 public:
  MemoryFile(const std::uint8_t* data, std::size_t size) : fd_(::memfd_create("nearfield-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) fail("memfd_create");
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) fail("write");
      done += static_cast<std::size_t>(n);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  //! A path that opens this file.
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  // A harness failure, not a reader's: stop loudly instead of reporting a false finding later.
  [[noreturn]] static void fail(const char* what) {
    std::perror(what);
    std::abort();
  }
  int fd_;
};

}  // namespace nf::fuzz
