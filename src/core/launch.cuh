#pragma once
//! Small launch helpers shared by the .cu files.

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/cuda_check.cuh"
#include "core/errors.h"
#include "core/gpu_runtime.h"

namespace nf::gpu {

//! The stream a launch site that follows StreamScope launches on (gpu_runtime.h, current_stream()).
inline cudaStream_t launch_stream() { return static_cast<cudaStream_t>(current_stream()); }

//! Multiprocessors of the current device (asked once per device: a multi-GPU run launches on
//! several).
inline int sm_count() {
  constexpr int kCached = 64;  // devices whose count is kept; beyond them it is asked every time
  static std::atomic<int> cached[kCached] = {};
  int device = 0;
  NF_CUDA(cudaGetDevice(&device));
  int c = device < kCached ? cached[device].load(std::memory_order_relaxed) : 0;
  if (c == 0) {
    NF_CUDA(cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, device));
    if (device < kCached) cached[device].store(c, std::memory_order_relaxed);
  }
  return c;
}

//! The most dynamic shared memory one block of the current device may opt in to (bytes).
inline int shared_memory_optin() {
  int device = 0, bytes = 0;
  NF_CUDA(cudaGetDevice(&device));
  NF_CUDA(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return bytes;
}

//! Refuses (UsageError) a kernel's `bytes` of dynamic shared memory a block, with its `static_bytes`
//! of static shared memory, past the device's opt-in limit, naming `what` (e.g. "--order 20 (3D,
//! double): P2M"): a clean refusal where cudaFuncSetAttribute would have failed with a bare CUDA
//! error (a 99 KB sm_86/89 card).
inline void require_shared_memory(std::size_t bytes, std::size_t static_bytes, const std::string& what) {
  const std::size_t optin = std::size_t(shared_memory_optin());
  if (bytes + static_bytes > optin)
    throw UsageError(what + " needs " + std::to_string(bytes + static_bytes) +
                     " bytes of shared memory a block, more than this GPU's " + std::to_string(optin));
}

//! The static shared memory of `kernel` (its __shared__ arrays), which the opt-in limit counts too.
template <class Kernel>
std::size_t static_shared_bytes(Kernel kernel) {
  cudaFuncAttributes a{};
  NF_CUDA(cudaFuncGetAttributes(&a, kernel));
  return a.sharedSizeBytes;
}

//! ceil(a / b) for unsigned sizes.
__host__ __device__ constexpr std::uint32_t div_up(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

//! Calls f(std::bool_constant<flag>{}) so a runtime flag selects a template instantiation.
template <class F>
void dispatch_bool(bool flag, F&& f) {
  if (flag)
    f(std::true_type{});
  else
    f(std::false_type{});
}

//! Calls f(std::integral_constant<int, D>{}) with D = dim (2 or 3): the one place where a runtime
//! dimension picks a kernel's template instantiation.
template <class F>
void dispatch_dim(int dim, F&& f) {
  if (dim == 2)
    f(std::integral_constant<int, 2>{});
  else if (dim == 3)
    f(std::integral_constant<int, 3>{});
  else
    throw std::logic_error("dimension must be 2 or 3");
}

//! Blocks of `threads` covering n items (at least one block, so a launch is always valid).
inline unsigned blocks_for(std::uint64_t n, unsigned threads) {
  const std::uint64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b > 0 ? b : 1);
}

//! The near-field kernels' two compile-time modes: f(guarded, counting) with std::bool_constant
//! arguments. Counting mode always takes the guarded interaction (it is for tests, not speed).
template <class F>
void dispatch_mode(bool counting, bool guarded, F&& f) {
  if (counting)
    f(std::true_type{}, std::true_type{});
  else
    dispatch_bool(guarded, [&](auto g) { f(g, std::false_type{}); });
}

}  // namespace nf::gpu

//! Explicit instantiations of a driver template `fn<D, T>(const View<T>&)` for 2D/3D, float/double.
#define NF_INSTANTIATE_DRIVER(fn, View)                 \
  template void fn<2, float>(const View<float>&);       \
  template void fn<3, float>(const View<float>&);       \
  template void fn<2, double>(const View<double>&);     \
  template void fn<3, double>(const View<double>&);

//! Explicit instantiations of a kernel maker `fn<D, T>()` returning std::unique_ptr<Kernel<T>>.
#define NF_INSTANTIATE_MAKER(fn, Kernel)                             \
  template std::unique_ptr<Kernel<float>> fn<2, float>();            \
  template std::unique_ptr<Kernel<float>> fn<3, float>();            \
  template std::unique_ptr<Kernel<double>> fn<2, double>();          \
  template std::unique_ptr<Kernel<double>> fn<3, double>();
