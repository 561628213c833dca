#pragma once
//! CPU near-field kernels, 2D/3D, float/double, over a tree and its sorted bodies (nearfield_cpu.cc;
//! a new CPU kernel goes in a file of its own ending with an NF_EXPORT_CPU_NEAR_FIELD line). Like
//! every kernel they ADD the forces into acc, which the caller zeroed:
//! - cpu-serial:  the paper's CPU column: one thread, boxes in Z-order, own box then each neighbor;
//! - cpu-n3:      one thread, half lists, each pair computed once and applied to both particles;
//! - cpu-omp:     OpenMP over boxes with full lists (each particle written by one thread);
//! - cpu-omp-n3:  OpenMP with Newton-3: per-thread accumulation buffers merged at the end.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/body.h"
#include "core/per_shape.h"
#include "tree/tree.h"

namespace nf {

//! Inputs and output of one CPU near-field evaluation.
template <class T>
struct HostNearField {
  const Tree* tree = nullptr;
  const Body<T>* bodies = nullptr;  //!< sorted by box (tree order)
  Acc4<T>* acc = nullptr;           //!< output, sorted order: the forces are added into it
  T eps2 = 0;
  unsigned long long* counter = nullptr;  //!< non-null: counting mode
  std::vector<Acc4<T>>* scratch = nullptr;  //!< kernels that need it: buffers kept between calls
  //! Only the first `computed_boxes` non-empty boxes (key order) are computed; the others are read
  //! as sources only (BoxScope::computed_boxes: one part of a spread evaluation, docs/design.md §15).
  std::uint32_t computed_boxes = ~0u;
};

//! The non-empty boxes a CPU kernel computes: the first min(computed_boxes, M) in key order.
template <class T>
std::uint32_t computed_nonempty(const HostNearField<T>& f) {
  return std::min<std::uint32_t>(f.computed_boxes, static_cast<std::uint32_t>(f.tree->nonempty.size()));
}
//! The same bound as a dense box index: boxes below it are computed.
template <class T>
std::uint64_t computed_dense_end(const HostNearField<T>& f) {
  const std::uint32_t k = computed_nonempty(f);
  return k < f.tree->nonempty.size() ? f.tree->nonempty[k] : f.tree->nbox;
}

//! A CPU near-field kernel for one (dimension, scalar type).
template <class T>
using CpuNearFieldFn = void (*)(const HostNearField<T>&);
//! What a CPU near-field kernel file exports: its function for each (dimension, scalar type).
using CpuNearFieldKernels = PerShape<CpuNearFieldFn>;
//! At the end of a kernel file (in namespace nf): exports function template fn<D, T> as
//! `id`_kernels, the name a registry line gives NF_KERNELS (methods/registry.cc).
#define NF_EXPORT_CPU_NEAR_FIELD(id, fn) extern const ::nf::CpuNearFieldKernels id##_kernels = NF_PER_SHAPE(fn);

// cpu-omp-n3 uses f.scratch for one buffer per thread (resized as needed). Deterministic: the
// boxes are cut into one contiguous range per thread, balanced by their pair counts, and the
// buffers are merged in thread order, so repeated runs with the same thread count agree bit for bit.

}  // namespace nf
