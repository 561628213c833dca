#include "io/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/errors.h"
#include "io/temp_files.h"

namespace nf {

namespace fs = std::filesystem;

namespace {

std::string error_text(int err) { return std::strerror(err); }

// The descriptor a name stands for: "-" and /dev/stdout are 1, /dev/stderr 2, /dev/fd/N and
// /proc/self/fd/N are N; -1 for every other name.
int named_descriptor(const std::string& p) {
  if (p == "-" || p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (p.compare(0, prefix.size(), prefix) != 0 || p.size() == prefix.size() || p.size() > prefix.size() + 6)
      continue;
    int fd = 0;
    for (std::size_t i = prefix.size(); i < p.size(); ++i) {
      if (p[i] < '0' || p[i] > '9') return -1;
      fd = fd * 10 + (p[i] - '0');
    }
    return fd;
  }
  return -1;
}

// A fresh name beside `target` for a temporary file of this process.
std::string temp_name(const std::string& target) {
  static std::atomic<unsigned> counter{0};
  return target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

// The folder a name lives in ("." for a bare name).
std::string folder_of(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

// Creates and removes a temporary file in `dir`: the honest test of "can a file be made here"
// (permissions, read-only mounts, /proc). Returns the error, or "" when it worked.
std::string try_create_in(const std::string& dir) {
  const std::string probe = temp_name((fs::path(dir) / ".nearfield").string());
  const int slot = io::register_temp_file(probe);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const int err = errno;
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
  io::unregister_temp_file(slot);
  return fd >= 0 ? std::string() : error_text(err);
}

}  // namespace

bool writes_to_standard_output(const std::string& path) { return named_descriptor(path) == 1; }

OutputTarget resolve_output(const std::string& path) {
  if (path.empty()) throw InputError("no output file name given");
  OutputTarget t;
  t.path = t.target = path;
  t.fd = named_descriptor(path);
  if (t.fd >= 0) {
    t.kind = OutputKind::stream;
    return t;
  }
  // Follow links one at a time: a dangling link names the file to create, and the link stays.
  std::string p = path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) break;  // a new name: its folder is checked below
      throw InputError(path, 0, "cannot write: " + error_text(errno));
    }
    if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "is a folder, not a file name");
    if (!S_ISLNK(st.st_mode)) {
      if (!S_ISREG(st.st_mode)) t.kind = OutputKind::stream;
      break;
    }
    if (hops == 40) throw InputError(path, 0, "cannot write: too many levels of symbolic links");
    std::string link(4096, '\0');
    const ssize_t got = ::readlink(p.c_str(), link.data(), link.size());
    if (got < 0) throw InputError(path, 0, "cannot read the symbolic link " + p + ": " + error_text(errno));
    link.resize(static_cast<std::size_t>(got));
    p = fs::path(link).is_absolute() ? link : (fs::path(p).parent_path() / link).string();
  }
  t.target = p;
  if (t.kind == OutputKind::replace) {
    const std::string dir = folder_of(p);
    const std::string via = p == path ? "" : " (where the link " + path + " points)";
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw InputError(path, 0, "cannot write: folder '" + dir + "' does not exist" + via);
    if (!fs::is_directory(dir, ec)) throw InputError(path, 0, "cannot write: '" + dir + "' is not a folder" + via);
  }
  return t;
}

namespace {
std::atomic<bool> discarding{false};

// resolve_output, or /dev/null for a process that writes no files.
OutputTarget target_of(const std::string& path) {
  if (discarding) return {path, "/dev/null", OutputKind::stream, -1};
  return resolve_output(path);
}
}  // namespace

void set_outputs_discarded(bool discarded) { discarding = discarded; }
bool outputs_discarded() { return discarding; }

void check_output_path(const std::string& path) {
  if (discarding) return;
  const OutputTarget t = resolve_output(path);
  if (t.fd >= 0) {
    const int flags = ::fcntl(t.fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
      throw InputError(path, 0, "cannot write: descriptor " + std::to_string(t.fd) + " is not open for writing");
    return;
  }
  if (t.kind == OutputKind::stream || ::access(t.target.c_str(), F_OK) == 0) {
    if (::access(t.target.c_str(), W_OK) != 0) throw InputError(path, 0, "cannot write: " + error_text(errno));
    if (t.kind == OutputKind::stream) return;
  }
  const std::string dir = folder_of(t.target), why = try_create_in(dir);
  if (!why.empty()) throw InputError(path, 0, "cannot write: no file can be created in folder '" + dir + "' (" + why + ")");
}

void check_output_path(const std::string& path, const std::string& input) {
  check_output_path(path);
  if (input.empty() || discarding) return;
  std::error_code ec;
  const OutputTarget t = resolve_output(path);
  if (t.kind != OutputKind::stream && t.fd < 0 && fs::equivalent(t.target, input, ec) && !ec)
    throw InputError(path, 0, "is the input file " + input + ": writing it would replace the particles read; give "
                              "another --output");
}

void check_output_folder(const std::string& dir) {
  if (discarding) return;
  if (dir.empty()) throw InputError("no output folder given");
  std::error_code ec;
  fs::path existing = dir;
  while (!fs::exists(existing, ec)) {
    existing = existing.parent_path();
    if (existing.empty()) existing = ".";
  }
  const bool is_dir = existing == fs::path(dir);
  if (!fs::is_directory(existing, ec))
    throw InputError(dir, 0,
                     is_dir ? "exists and is not a folder"
                            : "cannot create this folder: '" + existing.string() + "' is not a folder");
  const std::string why = try_create_in(existing.string());
  if (!why.empty())
    throw InputError(dir, 0,
                     is_dir ? "cannot write in this folder (" + why + ")"
                            : "cannot create this folder: no entry can be made in '" + existing.string() + "' (" +
                                  why + ")");
}

void create_output_folder(const std::string& dir) {
  if (discarding) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir, 0, "cannot create this folder: " + ec.message());
}

MadeFolder::MadeFolder(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || fs::exists(dir, ec)) return;
  fs::path missing = dir;  // the outermost folder that does not exist yet
  for (fs::path p = missing.parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) missing = p;
  create_output_folder(dir);
  if (!discarding) made_ = missing.string();
}

MadeFolder::~MadeFolder() {
  if (made_.empty()) return;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(made_, ec))
    if (!e.is_directory(ec)) return;  // a file: keep everything
  fs::remove_all(made_, ec);
}

OutputFile::OutputFile(std::string path) : t_(target_of(path)) {
  if (t_.fd >= 0) {
    std::fflush(nullptr);  // what the process printed through stdio comes first
    fd_ = ::fcntl(t_.fd, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0) throw InputError(t_.path, 0, "cannot write: descriptor " + std::to_string(t_.fd) + " is not open");
    return;
  }
  if (t_.kind == OutputKind::stream) {
    // A FIFO waits here for its reader, as a shell's redirection does.
    fd_ = ::open(t_.target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) throw InputError(t_.path, 0, "cannot write: " + error_text(errno));
    return;
  }
  struct stat old {};
  const bool replacing = ::stat(t_.target.c_str(), &old) == 0;
  tmp_ = temp_name(t_.target);
  slot_ = io::register_temp_file(tmp_);  // before the file exists: a signal then unlinks nothing
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int err = errno;
    io::unregister_temp_file(slot_);
    slot_ = -1;
    throw InputError(t_.path, 0, "cannot write: " + error_text(err));
  }
  if (replacing) {
    // The replacement keeps the permissions (and, where allowed, the owner) of what it replaces.
    if (::fchmod(fd_, old.st_mode & 07777) != 0) { /* a file we cannot chmod stays at the umask's mode */ }
    if (::fchown(fd_, old.st_uid, old.st_gid) != 0) { /* only root may give a file away */ }
  }
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  io::unregister_temp_file(slot_);
  slot_ = -1;
}

void OutputFile::write(const std::string& text) { write(text.data(), text.size()); }

void OutputFile::write(const void* data, std::size_t bytes) {
  if (fd_ < 0) throw std::logic_error("OutputFile::write after commit");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("cannot write " + t_.path + ": " + error_text(n < 0 ? errno : EIO));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

void OutputFile::commit() {
  if (fd_ < 0) throw std::logic_error("OutputFile::commit twice");
  if (t_.kind == OutputKind::stream) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && errno != EINTR) throw std::runtime_error("cannot write " + t_.path + ": " + error_text(errno));
    return;
  }
  // fsync before rename: after a crash the name holds either the old file or the whole new one.
  // EINVAL: a file system without fsync (its data still reaches the file).
  int err = ::fsync(fd_) == 0 || errno == EINVAL ? 0 : errno;
  if (::close(fd_) != 0 && err == 0 && errno != EINTR) err = errno;
  fd_ = -1;
  if (err == 0 && ::rename(tmp_.c_str(), t_.target.c_str()) != 0) err = errno;
  if (err != 0) {
    discard();
    throw std::runtime_error("cannot write " + t_.path + ": " + error_text(err));
  }
  tmp_.clear();  // renamed: nothing left to remove
  io::unregister_temp_file(slot_);
  slot_ = -1;
}

void write_output_file(const std::string& path, const std::string& text) {
  OutputFile f(path);
  f.write(text);
  f.commit();
}

}  // namespace nf
