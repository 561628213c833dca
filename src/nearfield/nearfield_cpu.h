#pragma once
//! CPU near-field kernels, 2D/3D, float/double, over a tree and its sorted bodies:
//! - cpu-serial:  the paper's CPU column: one thread, boxes in Z-order, own box then each neighbor;
//! - cpu-n3:      one thread, half lists, each pair computed once and applied to both particles;
//! - cpu-omp:     OpenMP over boxes with full lists (each particle written by one thread);
//! - cpu-omp-n3:  OpenMP with Newton-3: per-thread accumulation buffers merged at the end.

#include <vector>

#include "core/body.h"
#include "tree/tree.h"

namespace nf {

//! Inputs and output of one CPU near-field evaluation.
template <class T>
struct HostNearField {
  const Tree* tree = nullptr;
  const Body<T>* bodies = nullptr;  //!< sorted by box (tree order)
  Acc4<T>* acc = nullptr;           //!< output, sorted order
  T eps2 = 0;
  unsigned long long* counter = nullptr;  //!< non-null: counting mode
  std::vector<Acc4<T>>* scratch = nullptr;  //!< kernels that need it: buffers kept between calls
};

template <int D, class T>
void cpu_serial(const HostNearField<T>& f);
template <int D, class T>
void cpu_n3(const HostNearField<T>& f);
template <int D, class T>
void cpu_omp(const HostNearField<T>& f);
//! Uses f.scratch for one buffer per thread (resized as needed). Deterministic: the boxes are
//! cut into one contiguous range per thread, balanced by their pair counts, and the buffers are
//! merged in thread order, so repeated runs with the same thread count agree bit for bit.
template <int D, class T>
void cpu_omp_n3(const HostNearField<T>& f);

}  // namespace nf
