// CPU-only build: the GPU runtime reports itself unavailable and every other call refuses.
#include "core/errors.h"
#include "core/gpu_runtime.h"

namespace nf::gpu {
namespace {
#ifndef NF_NO_CUDA_REASON
#define NF_NO_CUDA_REASON "nvcc not found"
#endif
// Why, as the configuration found it (the build summary's CUDA line says the same).
const char* kReason = "this build has no CUDA support (configured without CUDA: " NF_NO_CUDA_REASON ")";
[[noreturn]] void refuse() { throw UsageError(kReason); }
}  // namespace

bool available() { return false; }
std::string unavailable_reason() { return kReason; }
DeviceInfo device_info(int) { refuse(); }
int device_count() { return 0; }
int current_device() { return 0; }
void set_device(int) { refuse(); }
DeviceScope::DeviceScope(int) : previous_(0) { refuse(); }
DeviceScope::~DeviceScope() = default;
Stream::Stream(bool, bool) { refuse(); }
Stream::~Stream() = default;
Event::Event() { refuse(); }
Event::~Event() = default;
void Event::record(const Stream*) { refuse(); }
void Event::wait_on(const Stream*) const { refuse(); }
void Event::synchronize() const { refuse(); }
double Event::elapsed_since(const Event&) const { refuse(); }
void* allocate(std::size_t) { refuse(); }
void release(void*) noexcept {}
void copy_to_device(void*, const void*, std::size_t) { refuse(); }
void copy_to_host(void*, const void*, std::size_t) { refuse(); }
void copy_on_device(void*, const void*, std::size_t) { refuse(); }
void fill_bytes(void*, int, std::size_t) { refuse(); }
void delay(double) { refuse(); }
void synchronize() { refuse(); }
struct EventTimer::Impl {};
EventTimer::EventTimer() { refuse(); }
EventTimer::~EventTimer() = default;
void EventTimer::start(const Stream*) { refuse(); }
void EventTimer::stop(const Stream*) { refuse(); }
double EventTimer::elapsed_ms() { refuse(); }

}  // namespace nf::gpu
