#pragma once
//! Error checking for CUDA runtime calls and kernel launches (.cu files only).

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace nf::gpu {

//! Thrown for any failed CUDA call; the message names the file, line and expression.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error: the next launch's check must not report it again
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " + cudaGetErrorName(e) +
                    " (" + cudaGetErrorString(e) + ")");
}

}  // namespace nf::gpu

//! Wraps a CUDA runtime call: NF_CUDA(cudaMalloc(&p, n));
#define NF_CUDA(expr) ::nf::gpu::check_cuda((expr), #expr, __FILE__, __LINE__)
//! After a kernel launch: reports launch-configuration errors at the launch site.
#define NF_CUDA_LAUNCHED() ::nf::gpu::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
