#include <stdexcept>
#include <string>

#include "core/body.h"
#include "core/launch.cuh"
#include "distributed/halo_gpu.h"

namespace nf {
namespace {

struct HaloPolicy {
  static constexpr unsigned threads = 256;  // one record per thread: a copy, bandwidth-bound
};

template <class Record>
__global__ void gather_kernel(const Record* __restrict__ records, const std::uint32_t* __restrict__ index,
                              std::size_t count, Record* __restrict__ out) {
  const std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) out[k] = records[index[k]];
}

template <class T>
__global__ void add_kernel(Acc4<T>* __restrict__ acc, const std::uint32_t* __restrict__ index, std::size_t count,
                           const Acc4<T>* __restrict__ in) {
  const std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  Acc4<T>& a = acc[index[k]];
  const Acc4<T> b = in[k];
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
}

}  // namespace

void gather_records(const void* records, std::size_t record_bytes, const std::uint32_t* index, std::size_t count,
                    void* out) {
  if (count == 0) return;
  const unsigned blocks = gpu::blocks_for(count, HaloPolicy::threads);
  if (record_bytes == sizeof(Body<float>))
    gather_kernel<<<blocks, HaloPolicy::threads>>>(static_cast<const Body<float>*>(records), index, count,
                                                   static_cast<Body<float>*>(out));
  else if (record_bytes == sizeof(Body<double>))
    gather_kernel<<<blocks, HaloPolicy::threads>>>(static_cast<const Body<double>*>(records), index, count,
                                                   static_cast<Body<double>*>(out));
  else
    throw std::logic_error("gather_records: records of " + std::to_string(record_bytes) + " bytes");
  NF_CUDA_LAUNCHED();
}

void add_accelerations(void* acc, bool double_precision, const std::uint32_t* index, std::size_t count,
                       const void* in) {
  if (count == 0) return;
  const unsigned blocks = gpu::blocks_for(count, HaloPolicy::threads);
  if (double_precision)
    add_kernel<<<blocks, HaloPolicy::threads>>>(static_cast<Acc4<double>*>(acc), index, count,
                                                static_cast<const Acc4<double>*>(in));
  else
    add_kernel<<<blocks, HaloPolicy::threads>>>(static_cast<Acc4<float>*>(acc), index, count,
                                                static_cast<const Acc4<float>*>(in));
  NF_CUDA_LAUNCHED();
}

}  // namespace nf
