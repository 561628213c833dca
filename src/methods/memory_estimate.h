#pragma once
//! What a run will hold in memory, estimated from N, the dimension, the precision, the level and
//! the kernel before anything is allocated, and the check that refuses a run that cannot fit
//! (docs/design.md §6, "Check before work").
//!
//! Counted: the arrays that grow with N or with the boxes, at their peak: the particles (float64
//! positions and masses, velocities and ids where present), the tree (tree_bytes: the compact
//! layout, and the dense one for kDenseTree kernels), the bodies and accelerations in the kernel's
//! precision, the per-thread buffers of Newton-3 OpenMP kernels, the near mask's cells, the far
//! field's expansions (two per non-empty box of every level) and M2L lists, the float64
//! accelerations a method returns in input order, on the GPU the uploaded particles as well.
//! Not counted: what does not grow with N (code, the OpenMP and CUDA runtimes, small vectors), the
//! GPU plans' work items and CUB's scratch (both a fraction of the tree), transient copies made
//! while a file is written. The check therefore keeps a margin of 10% over the estimate.

#include <cstdint>
#include <string>
#include <vector>

#include "methods/registry.h"

namespace nf {

//! Estimated peak bytes of a run, by part, on the host and on the GPU.
struct MemoryNeed {
  struct Part {
    std::string what;
    double bytes = 0;
  };
  std::vector<Part> host, gpu;
  double host_bytes() const;
  double gpu_bytes() const;
};

//! The particles of a run in float64: positions and masses, plus velocities and ids if present.
double particle_bytes(int dim, std::uint64_t n, bool velocities, bool ids);

//! Adds kernel k's method at setup s for n particles in `dim` dimensions, including the float64
//! accelerations it returns; `threads`: the OpenMP team of CPU kernels. At --level auto
//! (kAutoLevel) the tree is counted at the shallowest level with at least n boxes, an upper bound
//! of what the rule chooses (about 16 particles per box). A full method counts its near-field
//! kernel's part too; fmm-adaptive counts expansions and lists for 8 N / S kept boxes (S its leaf size), an
//! estimate, not a bound: the method checks the exact figure before it allocates them. Several GPUs
//! (`gpus` > 1) divide the GPU's part between them.
void add_method_memory(MemoryNeed& need, const KernelInfo& k, const MethodSetup& s, int dim, std::uint64_t n,
                       int threads, int gpus = 1);
//! validate's float64 reference: its bodies, its accelerations and the kernel's copy compared.
void add_reference_memory(MemoryNeed& need, int dim, std::uint64_t n);

//! Refuses (UsageError) `need` when it does not fit with a 10% margin: host bytes x 1.1 above
//! available_host_memory(), or GPU bytes x 1.1 above the current device's free memory
//! (cudaMemGetInfo; only asked when the need has a GPU part, so CPU-only builds never ask). The
//! message names `what`, the bytes needed with their largest parts, and the bytes available, and
//! ends with `outcome` (a check made before any work: "nothing was run").
void check_memory(const MemoryNeed& need, const std::string& what, const std::string& outcome = "nothing was run");

}  // namespace nf
