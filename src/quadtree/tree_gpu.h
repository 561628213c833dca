#pragma once
//! The GPU tree builder: Morton keys on the device, cub::DeviceRadixSort over only the key's
//! dim*K bits, box starts from key boundaries, neighbor lists filled by one thread per box.
//! Its output equals the CPU builder's (tree.h) element for element.

#include <cstdint>

#include "common/body.h"
#include "common/domain.h"
#include "common/gpu_runtime.h"
#include "common/particles.h"
#include "quadtree/tree.h"

namespace nf {

//! Input-order float64 positions and masses on the device.
struct DeviceParticles {
  int dim = 2;
  std::size_t n = 0;
  gpu::DeviceBuffer<double> x, y, z, m;
};

//! Copies the particles to the GPU.
DeviceParticles upload_particles(const Particles& p);

//! The device arrays of a tree (same meaning as Tree's), plus what launches need on the host.
struct DeviceTree {
  int dim = 2, level = 0;
  Domain domain;
  std::uint32_t nbox = 1, n = 0;
  std::uint32_t max_box_count = 0, nonempty_count = 0;
  gpu::DeviceBuffer<std::uint32_t> box_start, order, particle_box, nonempty;
  gpu::DeviceBuffer<std::uint32_t> full_offset, full_ids, half_offset, half_ids;
};

//! GPU time of each build stage (CUDA events), in milliseconds.
struct GpuBuildTimes {
  double domain = 0, keys = 0, sort = 0, box_starts = 0, neighbors = 0, total = 0;
};

//! Owns the tree arrays and the scratch space for one (dim, level, N), allocated once, so that
//! `build` runs kernels only and can be repeated (a simulation rebuilds every step).
class GpuTreeBuilder {
 public:
  GpuTreeBuilder(int dim, int level, std::size_t n);
  ~GpuTreeBuilder();
  GpuTreeBuilder(const GpuTreeBuilder&) = delete;
  GpuTreeBuilder& operator=(const GpuTreeBuilder&) = delete;

  //! Builds the tree of `p` (same dim and N as constructed). `domain` null: the default domain
  //! is reduced on the GPU. Fills `times` when given (this adds event records, not syncs).
  void build(const DeviceParticles& p, const Domain* domain, GpuBuildTimes* times = nullptr);
  const DeviceTree& tree() const { return tree_; }

  //! GPU times (ms) of `reps` runs of cub::DeviceRadixSort::SortPairs on the keys of the last build
  //! (the same keys, index values and dim*K bits the build sorts), after `warmup` runs.
  std::vector<double> time_bare_sort(int warmup, int reps);

 private:
  struct Scratch;
  DeviceTree tree_;
  std::unique_ptr<Scratch> s_;
};

//! Copies a device tree back into the CPU structure (for tests and the tree command).
Tree download_tree(const DeviceTree& t);

//! bodies[s] = particle order[s], rounded to T: the sorted bodies every near-field kernel reads.
template <class T>
void gather_bodies(const DeviceParticles& p, const DeviceTree& t, gpu::DeviceBuffer<Body<T>>& bodies);

}  // namespace nf
