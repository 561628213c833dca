// The parts of the GPU runtime that are the same with and without CUDA.
#include <cstdlib>
#include <filesystem>

#include "core/env.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"

namespace nf::gpu {

void require(const std::string& what) {
  if (!available()) throw UsageError(what + " needs a CUDA GPU: " + unavailable_reason());
}

std::string missing_device_reason(bool no_device, bool old_driver, const std::string& detail) {
  std::error_code ec;
  const bool driver = std::filesystem::exists("/proc/driver/nvidia/version", ec);
  if (old_driver && driver)
    return "the NVIDIA driver on this machine is older than this build's CUDA runtime needs (" + detail + ")";
  if (no_device || old_driver) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return "no CUDA device found (" + detail + (driver ? "" : "; no NVIDIA driver on this machine") +
           (visible ? std::string("; CUDA_VISIBLE_DEVICES=") + visible : std::string()) + ")";
  }
  return "no usable CUDA device (" + detail + ")";
}

namespace {
thread_local void* current = nullptr;  // StreamScope's stream; null: the default stream
}  // namespace

void* current_stream() { return current; }
StreamScope::StreamScope(const Stream* stream) : previous_(current) { current = stream ? stream->handle() : nullptr; }
StreamScope::~StreamScope() { current = previous_; }

bool required_by_environment() {
  return env::choice("NEARFIELD_REQUIRE_GPU", {"0", "1"}) == "1";
}

}  // namespace nf::gpu
