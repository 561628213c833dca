#include "core/host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

namespace nf {
namespace {

// The first number in a file (a cgroup limit or usage); false for "max" or a missing file.
bool read_number(const char* path, std::uint64_t& v) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text[0] < '0' || text[0] > '9') return false;
  v = std::stoull(text);
  return true;
}

// What a control group's limit leaves, or ~0 without one (v1 reports "no limit" as a huge number).
std::uint64_t cgroup_room() {
  std::uint64_t limit = 0, used = 0;
  if (read_number("/sys/fs/cgroup/memory.max", limit) && read_number("/sys/fs/cgroup/memory.current", used))
    return limit > used ? limit - used : 0;
  if (read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes", limit) && limit < (std::uint64_t(1) << 60) &&
      read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes", used))
    return limit > used ? limit - used : 0;
  return ~std::uint64_t(0);
}

int sharers = 1;  // set_host_memory_sharers

}  // namespace

std::uint64_t available_host_memory(std::string* source) {
  std::uint64_t bytes = 0;
  std::string from;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    std::uint64_t kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:") {
      bytes = kib * 1024;
      from = "MemAvailable";
      break;
    }
    meminfo.ignore(256, '\n');
  }
  if (from.empty()) {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
    bytes = pages > 0 && size > 0 ? std::uint64_t(pages) * std::uint64_t(size) : ~std::uint64_t(0);
    from = "available pages";
  }
  const std::uint64_t room = cgroup_room();
  if (room < bytes) {
    bytes = room;
    from = "the control group's memory limit";
  }
  if (sharers > 1 && bytes != ~std::uint64_t(0)) {
    bytes /= std::uint64_t(sharers);
    from += ", shared by the " + std::to_string(sharers) + " processes of this run on this host";
  }
  if (source) *source = from;
  return bytes;
}

void set_host_memory_sharers(int processes) { sharers = processes > 1 ? processes : 1; }

std::string byte_text(double bytes) {
  char buf[48];
  if (bytes >= 1073741824.0)
    std::snprintf(buf, sizeof buf, "%.3g GiB", bytes / 1073741824.0);
  else if (bytes >= 1048576.0)
    std::snprintf(buf, sizeof buf, "%.3g MiB", bytes / 1048576.0);
  else
    std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
  return buf;
}

}  // namespace nf
