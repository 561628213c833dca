#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.cuh"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/launch.cuh"

namespace nf::gpu {
namespace {
// Asked once: a missing driver or device is not an error until a GPU kernel is requested.
const std::string& probe() {
  static const std::string reason = [] {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return missing_device_reason(e == cudaErrorNoDevice, e == cudaErrorInsufficientDriver,
                                   std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e));
    }
    if (n == 0) return missing_device_reason(true, false, "cudaGetDeviceCount: 0 devices");
    return std::string();
  }();
  return reason;
}
}  // namespace

bool available() { return probe().empty(); }
std::string unavailable_reason() { return probe(); }

DeviceInfo device_info(int device) {
  require("device_info");
  if (device < 0) device = current_device();
  DeviceScope scope(device);  // cudaMemGetInfo reports the current device
  DeviceInfo d;
  cudaDeviceProp p{};
  NF_CUDA(cudaGetDeviceProperties(&p, device));
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  int khz = 0;
  NF_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  d.sm_clock_mhz = khz / 1000;
  NF_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device));
  d.mem_clock_mhz = khz / 1000;
  NF_CUDA(cudaRuntimeGetVersion(&d.runtime_version));
  NF_CUDA(cudaDriverGetVersion(&d.driver_version));
  NF_CUDA(cudaMemGetInfo(&d.free_bytes, &d.total_bytes));
  d.shared_per_block_optin = p.sharedMemPerBlockOptin;
  return d;
}

int device_count() {
  if (!available()) return 0;
  int n = 0;
  NF_CUDA(cudaGetDeviceCount(&n));
  return n;
}
int current_device() {
  int d = 0;
  NF_CUDA(cudaGetDevice(&d));
  return d;
}
void set_device(int device) { NF_CUDA(cudaSetDevice(device)); }

DeviceScope::DeviceScope(int device) : previous_(current_device()) {
  if (device != previous_) set_device(device);
}
DeviceScope::~DeviceScope() {
  int now = 0;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
}

namespace {
cudaStream_t raw(const Stream* s) { return s ? static_cast<cudaStream_t>(s->handle()) : cudaStream_t{}; }
}  // namespace

Stream::Stream(bool blocking, bool high) {
  int least = 0, greatest = 0;
  if (high) NF_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s{};
  NF_CUDA(cudaStreamCreateWithPriority(&s, blocking ? cudaStreamDefault : cudaStreamNonBlocking, high ? greatest : 0));
  s_ = s;
}
Stream::~Stream() { cudaStreamDestroy(static_cast<cudaStream_t>(s_)); }

Event::Event() {
  cudaEvent_t e{};
  NF_CUDA(cudaEventCreate(&e));
  e_ = e;
}
Event::~Event() { cudaEventDestroy(static_cast<cudaEvent_t>(e_)); }
void Event::record(const Stream* stream) { NF_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(e_), raw(stream))); }
void Event::wait_on(const Stream* stream) const {
  NF_CUDA(cudaStreamWaitEvent(raw(stream), static_cast<cudaEvent_t>(e_), 0));
}
void Event::synchronize() const { NF_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(e_))); }
double Event::elapsed_since(const Event& start) const {
  synchronize();
  float ms = 0.0f;
  NF_CUDA(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start.e_), static_cast<cudaEvent_t>(e_)));
  return ms;
}

void* allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw UsageError("cannot allocate " + std::to_string(bytes) + " bytes on the GPU: " + cudaGetErrorString(e));
  }
  return p;
}
void release(void* p) noexcept {
  if (p) cudaFree(p);
}
void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  NF_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  // From pageable memory the copy may still be landing when cudaMemcpy returns, ordered on the
  // default stream only: inside a StreamScope of another stream (the far field's, e.g. its lazily
  // built shift tables) the kernels that read it would not wait, so the copy finishes here.
  if (current_stream()) NF_CUDA(cudaStreamSynchronize(cudaStreamLegacy));
}
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  NF_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
namespace {
__global__ void delay_kernel(std::uint64_t ns) {
  std::uint64_t t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
}  // namespace
void copy_on_device(void* dst, const void* src, std::size_t bytes) {
  NF_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, launch_stream()));
}
void fill_bytes(void* dst, int value, std::size_t bytes) { NF_CUDA(cudaMemsetAsync(dst, value, bytes, launch_stream())); }
void delay(double ms) {
  delay_kernel<<<1, 1, 0, launch_stream()>>>(std::uint64_t(ms * 1e6));
  NF_CUDA(cudaGetLastError());
}
void synchronize() { NF_CUDA(cudaDeviceSynchronize()); }

struct EventTimer::Impl {
  cudaEvent_t start{}, stop{};
};
EventTimer::EventTimer() : impl_(new Impl) {
  NF_CUDA(cudaEventCreate(&impl_->start));
  NF_CUDA(cudaEventCreate(&impl_->stop));
}
EventTimer::~EventTimer() {
  cudaEventDestroy(impl_->start);
  cudaEventDestroy(impl_->stop);
}
void EventTimer::start(const Stream* stream) { NF_CUDA(cudaEventRecord(impl_->start, raw(stream))); }
void EventTimer::stop(const Stream* stream) { NF_CUDA(cudaEventRecord(impl_->stop, raw(stream))); }
double EventTimer::elapsed_ms() {
  NF_CUDA(cudaEventSynchronize(impl_->stop));
  float ms = 0.0f;
  NF_CUDA(cudaEventElapsedTime(&ms, impl_->start, impl_->stop));
  return ms;
}

}  // namespace nf::gpu
