// CPU-only build: the GPU runtime reports itself unavailable and every other call refuses.
#include "common/errors.h"
#include "common/gpu_runtime.h"

namespace nf::gpu {
namespace {
const char* kReason = "this build has no CUDA support (nvcc was not found when it was configured)";
[[noreturn]] void refuse() { throw UsageError(kReason); }
}  // namespace

bool available() { return false; }
std::string unavailable_reason() { return kReason; }
DeviceInfo device_info() { refuse(); }
void* allocate(std::size_t) { refuse(); }
void release(void*) noexcept {}
void copy_to_device(void*, const void*, std::size_t) { refuse(); }
void copy_to_host(void*, const void*, std::size_t) { refuse(); }
void copy_on_device(void*, const void*, std::size_t) { refuse(); }
void fill_bytes(void*, int, std::size_t) { refuse(); }
void synchronize() { refuse(); }
struct EventTimer::Impl {};
EventTimer::EventTimer() { refuse(); }
EventTimer::~EventTimer() = default;
void EventTimer::start() { refuse(); }
void EventTimer::stop() { refuse(); }
double EventTimer::elapsed_ms() { refuse(); }

}  // namespace nf::gpu
