#pragma once
//! The orders that M2L runs a thread per target box (farfield/m2l_thread_gpu.h), apart so that the
//! host's cost model (methods/full_level_rule.h) reads the same limits as the kernel.

namespace nf::farfield {

//! The highest order the thread-per-target kernel is built for: above it a thread's locals and
//! derivatives outgrow its registers (3D float p = 7 spills to a 480-byte stack frame; ptxas, sm_90).
template <int D, class T>
constexpr int kThreadMaxOrder = sizeof(T) == 4 ? (D == 3 ? 6 : 12) : (D == 3 ? 4 : 8);

//! The highest order of the wide variant (3D only): a thread still owns a target's locals in
//! registers, but reads the offset's derivatives row by row from the L1 (broadcasts) instead of
//! keeping them, which leaves room for 165 locals (3D float p = 8). In 2D it adds nothing. Where
//! the orders per offset apply (3D float p = 8) it walks each list an order at a time.
template <int D, class T>
constexpr int kWideMaxOrder = D == 3 ? (sizeof(T) == 4 ? 8 : 6) : kThreadMaxOrder<D, T>;

//! The highest order at which M2L runs a thread per target by default: every order the kernels
//! are built for (faster than the sibling-group kernel in every case measured; m2l_gpu.cu).
template <int D, class T>
constexpr int kThreadDefaultMaxOrder = kWideMaxOrder<D, T>;

//! The thread kernel's row stride: `terms` entries rounded up to whole 16-byte loads of `bytes`-byte
//! scalars. Where it differs from terms, the kernel first copies a level's moments to such rows.
constexpr int thread_row_stride(int terms, int bytes) {
  const int per_load = 16 / bytes;
  return (terms + per_load - 1) / per_load * per_load;
}

}  // namespace nf::farfield
