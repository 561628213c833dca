#pragma once
// The stages of the GPU tree builder as plain C++ drivers, one .cu file each (internal to
// src/tree). Every driver runs on the default stream; the builder (tree_gpu_builder.cc)
// calls them in order and times them.
//   tree_gpu_domain.cu     domain     min/max of the positions (only without an explicit domain)
//   tree_gpu_keys.cu       keys, sort 64-bit Morton keys; cub::DeviceRadixSort over dim*K bits
//                                     (stable: ties keep input order, as the CPU radix sort)
//   tree_gpu_boxes.cu      boxes      scan of the run boundaries: box_key, box_first,
//                                     particle_compact_box, M; the largest box
//   tree_gpu_neighbors.cu  neighbors  compact lists: counts, exclusive scans, fill
//   tree_gpu_dense.cu      dense      boxIdx over all boxes, dense lists (only on request)
#include <cstddef>
#include <cstdint>

#include "tree/domain.h"
#include "core/gpu_runtime.h"
#include "tree/tree_gpu.h"

namespace nf::tree_gpu {

//! Per-axis min/max as order-preserving integers (so atomics reduce doubles exactly).
struct DomainBounds {
  unsigned long long lo[3], hi[3];
};

//! Slots of Scratch::counters, read back by the host.
enum Counter : int { kMaxCount = 0, kBoxes = 1, kCounters = 2 };

//! The builder's scratch memory, sized once for (dim, level, N).
struct Scratch {
  gpu::DeviceBuffer<std::uint64_t> keys;         //!< N: keys in input order (the sort's input)
  gpu::DeviceBuffer<std::uint64_t> sorted_keys;  //!< N: keys in sorted order (the sort's output)
  gpu::DeviceBuffer<std::uint32_t> index;        //!< N: identity (the sort's input values)
  gpu::DeviceBuffer<std::uint32_t> full_count, half_count;  //!< per box + 1 (compact or dense)
  gpu::DeviceBuffer<std::uint32_t> counters;                //!< kCounters entries
  gpu::DeviceBuffer<DomainBounds> bounds;
  gpu::DeviceBuffer<Domain> domain;
  gpu::DeviceBuffer<unsigned char> temp;  //!< CUB temporary storage for every stage
  gpu::EventTimer stage_timer[6], total_timer;
};

// domain
//! Resets the bounds once; each reduction leaves them reset for the next.
void init_domain_bounds(Scratch& s);
//! s.domain = the default domain of the particles (docs/design.md §2), reduced on the GPU.
void reduce_domain(const DeviceParticles& p, Scratch& s);

// keys, sort
//! CUB temporary bytes of the sort.
std::size_t sort_temp_bytes(std::size_t n, int bits);
//! s.keys = Morton keys at `level` over s.domain, s.index = identity.
void compute_keys(const DeviceParticles& p, int level, Scratch& s);
//! (s.keys, s.index) sorted into (s.sorted_keys, t.order) over dim*level bits.
void sort_keys(DeviceTree& t, Scratch& s);

// boxes
std::size_t boxes_temp_bytes(std::size_t n);
//! t.box_key, box_first, particle_compact_box from s.sorted_keys; t.nonempty_count (read back);
//! the largest box into s.counters[kMaxCount].
void find_boxes(DeviceTree& t, Scratch& s);

// neighbors
std::size_t neighbors_temp_bytes(std::size_t boxes);
//! Compact full and half lists of t's non-empty boxes; t.near_*_links (read back); grows the
//! id buffers when needed.
void build_compact_lists(DeviceTree& t, Scratch& s);

// dense
std::size_t dense_temp_bytes(std::uint64_t nbox);
//! t.box_start, particle_box, nonempty and the dense full/half lists.
void build_dense(DeviceTree& t, Scratch& s);

}  // namespace nf::tree_gpu
