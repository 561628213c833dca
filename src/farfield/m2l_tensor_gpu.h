#pragma once
//! M2L of sibling groups on the tensor cores, float only (docs/design.md §16, "M2L on tensor cores").
//! CUDA builds only.
//!
//! The sibling groups of farfield/m2l_gpu.h (a block takes the same child of 32 parents and walks the
//! 6^d - 3^d candidate offsets of their interaction lists), but each offset's product of the
//! operator A_kn = (-1)^|n| D_{n+k}(R) with the block's gathered moments runs as m16n8k8 TF32
//! products on the tensor cores: A's rows cut into tiles of 16, its columns into k-steps of 8, the
//! 32 slots into 4 tiles of 8. TF32 keeps 10 mantissa bits, so each float is split into two TF32
//! parts and three products are summed (A_hi B_hi + A_hi B_lo + A_lo B_hi): the error of a product is
//! then about 2^-22 of it, that of float. No operator table is kept: each lane reads its entries of A
//! from the offset's derivatives (terms(p) of them, staged in shared memory with their negatives)
//! through an index map that every offset and level share, so a block copies a few kilobytes of
//! operator per offset where the group kernel's table is tens.

#include <cstddef>
#include <cstdint>

#include "core/gpu_runtime.h"
#include "farfield/lists_gpu.h"
#include "farfield/offset_order.h"
#include "tree/levels_gpu.h"

namespace nf::farfield {

template <int D>
class M2LTensor {
 public:
  //! Plans order p with the orders per offset `orders`: the warps' units, the index map and the
  //! shared memory. False, with nothing kept, where the kernel does not fit (the moments of 32 slots
  //! and the derivatives past the opt-in shared memory, or more row tiles than the warps' units).
  bool reset(int p, const OffsetOrders& orders);
  //! Whether an order is planned.
  bool ready() const { return p_ > 0; }
  //! Forgets the plan (another kernel runs this order).
  void clear() { p_ = -1; }
  //! The signed derivative tables of levels 2..leaf from the float derivative tables `derivatives`
  //! (level l's kOffsets<D> tables of terms(p) at derivatives + l * per_level).
  void prepare(const float* derivatives, std::size_t per_level, int leaf);
  //! L += the M2L of level l over the sibling groups of `parents` (its split boxes where listed),
  //! each group's offsets shared among `splits` blocks (then added to L atomically).
  void apply(int l, const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list, const float* M,
             float* L, unsigned splits);

 private:
  int p_ = -1, terms_ = 0, rows_ = 0, dz_stride_ = 0, warps_ = 0, stages_ = 1;
  std::size_t shared_bytes_ = 0;
  OffsetOrders orders_{};
  gpu::DeviceBuffer<int> plan_;
  gpu::DeviceBuffer<std::uint32_t> map_;        // per (tile, k-step, lane): 4 x 16-bit indices into dz
  gpu::DeviceBuffer<unsigned char> degree_;     // |i| of derivative index i
  gpu::DeviceBuffer<float> dz_;                 // per level: kOffsets<D> signed tables of dz_stride_
};

}  // namespace nf::farfield
