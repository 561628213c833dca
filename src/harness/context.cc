#include "harness/context.h"

#include <omp.h>

#include <cctype>
#include <ctime>
#include <fstream>

#include "common/gpu_runtime.h"
#include "common/version.h"

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
}  // namespace

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string m = line.substr(colon + 1);
        while (!m.empty() && m.front() == ' ') m.erase(m.begin());
        return m;
      }
    }
  return "unknown cpu";
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

std::map<std::string, std::string> run_context(bool gpu_kernel) {
  std::map<std::string, std::string> c;
  c["host_cpu"] = cpu_model();
  c["threads"] = std::to_string(omp_get_max_threads());
  c["git_commit"] = git_commit();
  c["timestamp"] = timestamp();
  if (gpu_kernel && gpu::available()) {
    const gpu::DeviceInfo d = gpu::device_info();
    c["device"] = d.name;
    c["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
    c["sm_clock_mhz"] = std::to_string(d.sm_clock_mhz);
    c["mem_clock_mhz"] = std::to_string(d.mem_clock_mhz);
    c["cuda_runtime"] = version_string(d.runtime_version);
    c["cuda_driver"] = version_string(d.driver_version);
  } else {
    c["device"] = cpu_model();
  }
  return c;
}

}  // namespace nf
