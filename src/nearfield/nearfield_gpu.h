#pragma once
//! The GPU near-field kernel contract. One .cu file per kernel in this folder (ppt.cu, bpb.cu,
//! bpb_n3.cu, n3_rotate.cu, ...; the file's first lines say what it does), each ending with one
//! NF_EXPORT_GPU_NEAR_FIELD line that the registry (methods/registry.cc) names. A kernel reads
//! the sorted bodies and the tree through a NearFieldView and ADDS the forces on the boxes it
//! computes into view.acc, which its caller has zeroed (docs/design.md §3): so the near field
//! and a far field, or several kernels, can add into one array. Boxes larger than a block are
//! processed in chunks; empty boxes are never launched.

#include <cstdint>
#include <memory>

#include "core/body.h"
#include "core/gpu_runtime.h"
#include "core/per_shape.h"

namespace nf {

//! Raw device pointers and scalars of one near-field evaluation.
template <class T>
struct NearFieldView {
  const Body<T>* bodies = nullptr;           //!< sorted by box
  Acc4<T>* acc = nullptr;                    //!< output, sorted order
  // The compact layout (always): the nonempty_count = M non-empty boxes in key order.
  const std::uint64_t* box_key = nullptr;      //!< M Morton keys, ascending
  const std::uint32_t* box_first = nullptr;    //!< M + 1 offsets into the sorted bodies
  const std::uint32_t* near_offset = nullptr;  //!< M + 1: compact neighbor lists, full or half as
  const std::uint32_t* near_ids = nullptr;     //!<   the kernel's kNewton3 trait says
  const std::uint32_t* particle_compact_box = nullptr;  //!< n: each sorted body's compact box id
  const std::uint32_t* near_full_offset = nullptr;  //!< M + 1: the full compact lists, whatever the
  const std::uint32_t* near_full_ids = nullptr;     //!<   kernel's traits (one-sided paths need them)
  // The paper's dense layout (kernels with kDenseTree only; null otherwise).
  const std::uint32_t* box_start = nullptr;  //!< boxIdx, nbox + 1
  const std::uint32_t* particle_box = nullptr;
  const std::uint32_t* nonempty = nullptr;  //!< dense ids of the non-empty boxes, ascending
  std::uint32_t nonempty_count = 0;  //!< M, the non-empty boxes of the tree
  //! The boxes whose particles' forces are computed: the first computed_boxes of the M (all of
  //! them unless the evaluation is one part of a larger one, BoxScope).
  std::uint32_t computed_boxes = 0;
  //! False when the computed boxes' neighbors with smaller keys are absent from the tree (a part
  //! that computes half-list pairs only, BoxScope): a kernel must then compute every pair through
  //! the half lists and may not take a one-sided path over full lists.
  bool lower_neighbors = true;
  const std::uint32_t* neighbor_offset = nullptr;  //!< dense lists: full (ppt, bpt, bpb) or half (bpb-n3)
  const std::uint32_t* neighbor_ids = nullptr;
  std::uint32_t n = 0;
  std::uint32_t max_box_count = 0;
  T eps2 = 0;
  bool guarded = true;
  //! True when acc holds zeros (the method zeroed it before this evaluation and nothing has added
  //! since): a thread that owns its particles' outputs may then start from zero instead of loading
  //! them (core/body.h's output_start). Kernels still add: this only spares a load.
  bool acc_zero = false;
  unsigned long long* counter = nullptr;  //!< non-null: counting mode, interactions evaluated are added here
  gpu::Workspace* workspace = nullptr;    //!< scratch memory (host object: for the driver, not the kernel)
};

//! A GPU near-field kernel with a plan: `plan` runs once per tree (its work lists derive from the
//! tree, like the neighbor lists, and its time is reported with the tree build), `launch` once
//! per force evaluation.
template <class T>
class GpuNearFieldKernel {
 public:
  virtual ~GpuNearFieldKernel() = default;
  virtual void plan(const NearFieldView<T>& v) = 0;
  virtual void launch(const NearFieldView<T>& v) = 0;
};

//! A kernel without a plan: one driver function launched per evaluation.
template <class T>
class FunctionKernel final : public GpuNearFieldKernel<T> {
 public:
  explicit FunctionKernel(void (*f)(const NearFieldView<T>&)) : f_(f) {}
  void plan(const NearFieldView<T>&) override {}
  void launch(const NearFieldView<T>& v) override { f_(v); }

 private:
  void (*f_)(const NearFieldView<T>&);
};

//! Makes the kernel (with its plan state) for one evaluation.
template <class T>
using GpuNearFieldMaker = std::unique_ptr<GpuNearFieldKernel<T>> (*)();
//! What a GPU near-field kernel file exports: its maker for each (dimension, scalar type).
using GpuNearFieldKernels = PerShape<GpuNearFieldMaker>;

namespace detail {
template <int D, class T, template <int, class> class K>
std::unique_ptr<GpuNearFieldKernel<T>> make_kernel() {
  return std::make_unique<K<D, T>>();
}
template <class T, void (*F)(const NearFieldView<T>&)>
std::unique_ptr<GpuNearFieldKernel<T>> make_function_kernel() {
  return std::make_unique<FunctionKernel<T>>(F);
}
}  // namespace detail

//! At the end of a kernel file (in namespace nf): exports kernel class template K<D, T> (a
//! GpuNearFieldKernel<T> with a plan) as `id`_kernels, the name a registry line gives NF_KERNELS.
#define NF_EXPORT_GPU_NEAR_FIELD(id, K)                                                                   \
  extern const ::nf::GpuNearFieldKernels id##_kernels = {                                                \
      &detail::make_kernel<2, float, K>, &detail::make_kernel<3, float, K>, &detail::make_kernel<2, double, K>, \
      &detail::make_kernel<3, double, K>};
//! The same for a kernel without a plan: driver function template fn<D, T>(const NearFieldView<T>&).
#define NF_EXPORT_GPU_NEAR_FIELD_DRIVER(id, fn)                                                      \
  extern const ::nf::GpuNearFieldKernels id##_kernels = {                                           \
      &detail::make_function_kernel<float, &fn<2, float>>, &detail::make_function_kernel<float, &fn<3, float>>, \
      &detail::make_function_kernel<double, &fn<2, double>>, &detail::make_function_kernel<double, &fn<3, double>>};

}  // namespace nf
