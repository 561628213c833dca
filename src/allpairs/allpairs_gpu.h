#pragma once
//! GPU all-pairs kernels (drivers; the kernels are in the .cu files of this folder, each ending
//! with an NF_EXPORT_GPU_ALL_PAIRS line the registry names; like every kernel they ADD their
//! forces into acc, which the caller zeroed):
//! - allpairs-naive: one thread per body, sources read straight from global memory;
//! - allpairs-tiled: GPU Gems 3 ch. 31: tiles of p bodies staged in shared memory, unrolled loop;
//! - allpairs-2d: the 2D-tiled scheme of 004_efc2d18ad8f67007.txt: the sources are cut into
//!   slices handled by different blocks, each writing a partial sum, then a reduction kernel.
//! All take any N (a partial last tile is handled), 2D/3D, float/double, and the near-field mask.

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "allpairs/near_mask.h"
#include "core/body.h"
#include "core/gpu_runtime.h"
#include "core/per_shape.h"

namespace nf {

//! Raw device pointers and scalars of one all-pairs evaluation (bodies in input order).
template <class T>
struct AllPairsView {
  const Body<T>* bodies = nullptr;
  const Cell* cells = nullptr;  //!< null: all pairs; otherwise the near-field mask
  Acc4<T>* acc = nullptr;       //!< output, one per body
  std::uint32_t n = 0;
  //! The sources, when they are not the bodies themselves (a simulation's sub-sample: every k-th
  //! body, masses times k); null: every body is a source. Not with the near-field mask. A source
  //! at a target's own position adds exactly 0 (zero distance), so a body never pulls itself.
  const Body<T>* sources = nullptr;
  std::uint32_t source_count = 0;
  T eps2 = 0;
  bool guarded = true;  //!< false only when unguarded_is_safe<T>() holds
  gpu::Workspace* workspace = nullptr;  //!< scratch memory (allpairs-2d's partial sums)
};

//! v with the sources spelled out (the bodies, unless v names others): what the kernels read.
template <class T>
AllPairsView<T> with_sources(AllPairsView<T> v) {
  if (!v.sources) {
    v.sources = v.bodies;
    v.source_count = v.n;
  } else if (v.cells) {
    throw std::logic_error("all-pairs kernels: separate sources and the near-field mask exclude each other");
  }
  return v;
}

//! Number of source slices allpairs-2d uses for n targets and `sources` sources (1 when the
//! targets alone fill the GPU).
std::uint32_t allpairs_2d_slices(std::uint32_t n, std::uint32_t sources);
//! allpairs-2d's partial sums go to v.workspace (allpairs_2d_slices(n, sources) * n accelerations
//! when slicing).

//! A GPU all-pairs driver for one (dimension, scalar type).
template <class T>
using GpuAllPairsFn = void (*)(const AllPairsView<T>&);
//! What a GPU all-pairs kernel file exports: its driver for each (dimension, scalar type).
using GpuAllPairsKernels = PerShape<GpuAllPairsFn>;
//! At the end of a kernel file (in namespace nf): exports driver template fn<D, T> as `id`_kernels.
#define NF_EXPORT_GPU_ALL_PAIRS(id, fn) extern const ::nf::GpuAllPairsKernels id##_kernels = NF_PER_SHAPE(fn);

}  // namespace nf
