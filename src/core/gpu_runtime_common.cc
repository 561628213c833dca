// The parts of the GPU runtime that are the same with and without CUDA.
#include <cstdlib>

#include "core/errors.h"
#include "core/gpu_runtime.h"

namespace nf::gpu {

void require(const std::string& what) {
  if (!available()) throw UsageError(what + " needs a CUDA GPU: " + unavailable_reason());
}

bool required_by_environment() {
  const char* v = std::getenv("NEARFIELD_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

}  // namespace nf::gpu
