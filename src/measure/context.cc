#include "measure/context.h"

#include <omp.h>
#include <sys/utsname.h>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "core/version.h"
#include "methods/registry.h"

// Set by CMake for this file: the compilers the binary was built with.
#ifndef NF_CXX_COMPILER
#define NF_CXX_COMPILER "unknown"
#endif
#ifndef NF_CUDA_COMPILER
#define NF_CUDA_COMPILER ""
#endif

namespace nf {
namespace {
std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string slug(const std::string& text) {
  std::string s;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

// The value after "key:" (or "key=") on the first line of `file` that starts with `key`.
std::string first_value(const std::string& file, const std::string& key, char separator) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      const auto at = line.find(separator);
      if (at == std::string::npos) continue;
      std::string v = line.substr(at + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '"')) v.erase(v.begin());
      while (!v.empty() && (v.back() == ' ' || v.back() == '"')) v.pop_back();
      return v;
    }
  return "";
}

std::string gib(double bytes) {
  if (bytes <= 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

// Nominal clock: the highest frequency the kernel's cpufreq reports, else the current clock of
// /proc/cpuinfo (virtual machines often have no cpufreq).
std::string cpu_clock_mhz() {
  std::ifstream max("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  long khz = 0;
  if (max >> khz && khz > 0) return std::to_string(khz / 1000);
  const std::string mhz = first_value("/proc/cpuinfo", "cpu MHz", ':');
  double v = 0;
  return parse_double(mhz, v) ? std::to_string(static_cast<long>(v + 0.5)) : "";
}

std::string memory_gib() {
  const std::string kb = first_value("/proc/meminfo", "MemTotal", ':');  // "131072000 kB"
  double v = 0;
  return parse_double(kb.substr(0, kb.find(' ')), v) ? gib(v * 1024) : "";
}

std::string os_name() {
  std::string name = first_value("/etc/os-release", "PRETTY_NAME", '=');
  utsname u{};
  if (::uname(&u) == 0) name += std::string(name.empty() ? "" : ", ") + u.sysname + " " + u.release;
  return name.empty() ? "unknown" : name;
}

// Everything but the kernel-dependent fields; host facts are read once per process.
std::map<std::string, std::string> host_context(const std::string& scale) {
  static const std::map<std::string, std::string> host = {
      {"host_cpu", cpu_model()},
      {"cpu_clock_mhz", cpu_clock_mhz()},
      {"cpu_cores", std::to_string(std::thread::hardware_concurrency())},
      {"memory_gib", memory_gib()},
      {"os", os_name()},
      {"compiler", NF_CXX_COMPILER},
  };
  std::map<std::string, std::string> c = host;
  c["git_commit"] = git_commit();
  c["timestamp"] = timestamp();
  c["scale"] = scale;
  return c;
}

void add_gpu(std::map<std::string, std::string>& c) {
  const gpu::DeviceInfo d = gpu::device_info();
  c["device"] = d.name;
  c["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  c["sm_clock_mhz"] = std::to_string(d.sm_clock_mhz);
  c["mem_clock_mhz"] = std::to_string(d.mem_clock_mhz);
  c["gpu_memory_gib"] = gib(static_cast<double>(d.total_bytes));
  c["cuda_runtime"] = version_string(d.runtime_version);
  c["cuda_driver"] = version_string(d.driver_version);
  c["cuda_compiler"] = NF_CUDA_COMPILER;
}
}  // namespace

const std::vector<std::string>& context_columns() {
  static const std::vector<std::string> columns = {
      "device",   "compute_capability", "sm_clock_mhz", "mem_clock_mhz", "gpu_memory_gib", "cuda_runtime",
      "cuda_driver", "cuda_compiler",   "host_cpu",     "cpu_clock_mhz", "cpu_cores",      "memory_gib",
      "os",       "compiler",           "threads",      "scale",         "git_commit",     "timestamp"};
  return columns;
}

std::string cpu_model() {
  const std::string m = first_value("/proc/cpuinfo", "model name", ':');
  return m.empty() ? "unknown cpu" : m;
}

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string device_slug() {
  if (gpu::available()) return slug(gpu::device_info().name);
  return "cpu-" + slug(cpu_model());
}

std::map<std::string, std::string> run_context(bool gpu_row, const std::string& scale) {
  std::map<std::string, std::string> c = host_context(scale);
  if (gpu_row && gpu::available()) {
    add_gpu(c);
  } else {
    c["device"] = c["host_cpu"];
    c["threads"] = "1";
  }
  return c;
}

std::map<std::string, std::string> run_context(const KernelInfo& k, const std::string& scale) {
  std::map<std::string, std::string> c = run_context(k.gpu(), scale);
  if (!k.gpu()) c["threads"] = std::to_string(kernel_threads(k));
  return c;
}

int kernel_threads(const KernelInfo& k) { return k.openmp() ? omp_get_max_threads() : 1; }

}  // namespace nf
