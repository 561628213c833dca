#include <cuda_runtime.h>

#include "common/cuda_check.cuh"
#include "common/errors.h"
#include "common/gpu_runtime.h"

namespace nf::gpu {
namespace {
// Asked once: a missing driver or device is not an error until a GPU kernel is requested.
const std::string& probe() {
  static const std::string reason = [] {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
        return std::string("no CUDA driver or device on this machine (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
      return std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
    }
    if (n == 0) return std::string("no CUDA device found");
    return std::string();
  }();
  return reason;
}
}  // namespace

bool available() { return probe().empty(); }
std::string unavailable_reason() { return probe(); }

DeviceInfo device_info() {
  require("device_info");
  DeviceInfo d;
  cudaDeviceProp p{};
  NF_CUDA(cudaGetDeviceProperties(&p, 0));
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  int khz = 0;
  NF_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  d.sm_clock_mhz = khz / 1000;
  NF_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0));
  d.mem_clock_mhz = khz / 1000;
  NF_CUDA(cudaRuntimeGetVersion(&d.runtime_version));
  NF_CUDA(cudaDriverGetVersion(&d.driver_version));
  NF_CUDA(cudaMemGetInfo(&d.free_bytes, &d.total_bytes));
  d.shared_per_block_optin = p.sharedMemPerBlockOptin;
  return d;
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
}
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  NF_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
void copy_on_device(void* dst, const void* src, std::size_t bytes) {
  NF_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
}
void fill_bytes(void* dst, int value, std::size_t bytes) { NF_CUDA(cudaMemsetAsync(dst, value, bytes)); }
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
void EventTimer::start() { NF_CUDA(cudaEventRecord(impl_->start)); }
void EventTimer::stop() { NF_CUDA(cudaEventRecord(impl_->stop)); }
double EventTimer::elapsed_ms() {
  NF_CUDA(cudaEventSynchronize(impl_->stop));
  float ms = 0.0f;
  NF_CUDA(cudaEventElapsedTime(&ms, impl_->start, impl_->stop));
  return ms;
}

}  // namespace nf::gpu
