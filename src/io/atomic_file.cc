#include "io/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/errors.h"

namespace nf {

void check_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError("no output file name given");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path, 0, "is a folder, not a file name");
  const fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) return;
  if (!fs::exists(dir, ec)) throw InputError(path, 0, "cannot write: folder '" + dir.string() + "' does not exist");
  if (!fs::is_directory(dir, ec)) throw InputError(path, 0, "cannot write: '" + dir.string() + "' is not a folder");
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  check_output_path(path_);
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw InputError(path_, 0, std::string("cannot write: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (f_) {
    std::fclose(f_);
    std::remove(tmp_.c_str());
  }
}

void AtomicFile::write(const std::string& text) { write(text.data(), text.size()); }

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (!f_) throw std::logic_error("AtomicFile::write after commit");
  if (bytes > 0 && std::fwrite(data, 1, bytes, f_) != bytes)
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
}

void AtomicFile::commit() {
  if (!f_) throw std::logic_error("AtomicFile::commit twice");
  const bool ok = std::fflush(f_) == 0 && ::fsync(::fileno(f_)) == 0;
  const int err = errno;
  std::fclose(f_);
  f_ = nullptr;
  if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int e = ok ? errno : err;
    std::remove(tmp_.c_str());
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(e));
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

}  // namespace nf
