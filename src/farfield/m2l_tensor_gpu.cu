// M2L of sibling groups on the tensor cores (farfield/m2l_tensor_gpu.h): the plan, the index map,
// the signed derivative tables and the launch (the kernel: farfield/m2l_tensor_kernel.cuh).
#include "farfield/m2l_tensor_gpu.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/cuda_check.cuh"
#include "core/env.h"
#include "core/launch.cuh"
#include "farfield/m2l_group_plan.h"
#include "farfield/m2l_tensor_kernel.cuh"
#include "farfield/passes_gpu.h"
#include "farfield/multi_index.h"

namespace nf::farfield {
namespace {

using namespace m2l_plan;
static_assert(kTensorMaxTiles == kMaxWarps * kTensorUnits, "the plans' tile limit");

// dz[o][e] of level blockIdx.z (both tables at that many level strides): for e < terms, D_e of
// offset o (index sum_a (R_a + 3) 7^a), zero where |e| passes the offset's order; for terms <= e <
// 2 terms, minus that of e - terms; zero after (the map's index for entries past order p).
template <int D>
__global__ void signed_kernel(int terms, int dz_stride, std::size_t per_level, const unsigned char* __restrict__ degree,
                              OffsetOrders orders, const float* __restrict__ derivatives, float* __restrict__ dz) {
  const int o = blockIdx.y;
  const float* d = derivatives + blockIdx.z * per_level + std::size_t(o) * terms;
  float* out = dz + (std::size_t(blockIdx.z) * kOffsets<D> + o) * dz_stride;
  int R[D];
  for (int a = 0, v = o; a < D; ++a, v /= 7) R[a] = v % 7 - 3;
  const int order = orders.at<D>(R);
  for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < dz_stride; e += gridDim.x * blockDim.x) {
    const int i = e < terms ? e : e - terms;
    float v = 0.0f;
    if (e < 2 * terms && degree[i] <= order) v = e < terms ? d[i] : -d[i];
    out[e] = v;
  }
}

}  // namespace

template <int D>
bool M2LTensor<D>::reset(int p, const OffsetOrders& orders) {
  clear();
  const std::size_t optin = std::size_t(gpu::shared_memory_optin()) - gpu::static_shared_bytes(tensor_kernel<D, 1>);
  // As many operand buffers as fit, up to kTensorStages (NEARFIELD_M2L_STAGES=S takes at most S,
  // comparisons).
  const int most = std::min(int(env::integer("NEARFIELD_M2L_STAGES", 1, 4, kTensorStages)), kTensorStages);
  int stages = most;
  while (stages > 0 && tensor_shared_bytes(D, p, stages) > optin) --stages;
  if (stages == 0) return false;
  const Quads<D> tiles(p, 16, 8, 1);  // row tiles of 16, columns in k-steps of 8, start: first k-step
  std::vector<int> plan;
  const int warps = best_plan<D>(tiles, order_classes<D>(orders), kTensorUnits, plan, 1);
  if (warps == 0) return false;
  const int t = terms<D>(p);
  const std::vector<std::uint32_t> map = tensor_map<D>(p, tiles);
  std::vector<unsigned char> degree(static_cast<std::size_t>(t));
  for (int i = 0; i < t; ++i) degree[std::size_t(i)] = static_cast<unsigned char>(multi_index<D>(i).degree());
  plan_ = gpu::DeviceBuffer<int>(plan);
  map_ = gpu::DeviceBuffer<std::uint32_t>(map);
  degree_ = gpu::DeviceBuffer<unsigned char>(degree);
  terms_ = t, rows_ = (t + 7) & ~7, dz_stride_ = tensor_table_entries(D, p), warps_ = warps, stages_ = stages;
  shared_bytes_ = tensor_shared_bytes(D, p, stages_);
  orders_ = orders;
  p_ = p;  // last: a caller that catches an error plans again
  return true;
}

template <int D>
void M2LTensor<D>::prepare(const float* derivatives, std::size_t per_level, int leaf) {
  if (!ready() || leaf < 2) return;
  const std::size_t per = std::size_t(kOffsets<D>) * std::size_t(dz_stride_);
  if (dz_.size() < std::size_t(leaf + 1) * per) dz_ = gpu::DeviceBuffer<float>(std::size_t(leaf + 1) * per);
  const dim3 grid(gpu::div_up(std::uint32_t(dz_stride_), 256u), kOffsets<D>, unsigned(leaf - 1));
  signed_kernel<D><<<grid, 256>>>(terms_, dz_stride_, per_level, degree_.data(), orders_, derivatives + 2 * per_level,
                                  dz_.data() + 2 * per);
  NF_CUDA(cudaGetLastError());
}

template <int D>
void M2LTensor<D>::apply(int l, const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list,
                         const float* M, float* L, unsigned splits) {
  const std::uint32_t blocks = (1u << D) * gpu::div_up(parents.boxes, std::uint32_t(kTensorTargets));
  const float* dz = dz_.data() + std::size_t(l) * kOffsets<D> * std::size_t(dz_stride_);
  auto launch = [&](auto kernel) {
    // The limit is the kernel instance's, for the whole process (another order may have set it).
    NF_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes_)));
    kernel<<<dim3(blocks, splits), 32 * warps_, shared_bytes_, gpu::launch_stream()>>>(level, parents, list, terms_, rows_, dz_stride_,
                                                                 plan_.data(), reinterpret_cast<const uint2*>(map_.data()),
                                                                 dz, orders_, M, L);
  };
  switch (stages_) {
    case 4: launch(tensor_kernel<D, 4>); break;
    case 3: launch(tensor_kernel<D, 3>); break;
    case 2: launch(tensor_kernel<D, 2>); break;
    default: launch(tensor_kernel<D, 1>); break;
  }
  NF_CUDA(cudaGetLastError());
}

template class M2LTensor<2>;
template class M2LTensor<3>;

}  // namespace nf::farfield
