#pragma once
//! Small launch helpers shared by the .cu files.

#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.cuh"

namespace nf::gpu {

//! Multiprocessors of device 0 (asked once).
inline int sm_count() {
  static const int count = [] {
    int c = 0;
    NF_CUDA(cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, 0));
    return c;
  }();
  return count;
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

}  // namespace nf::gpu
