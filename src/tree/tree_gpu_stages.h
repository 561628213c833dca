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
using DomainBounds = PositionBounds;

//! Slots of Scratch::counters: M, the largest box and the list totals, computed on the device
//! and read back by the host once, at the end of a build (BuildSummary).
enum Counter : int { kMaxCount = 0, kBoxes = 1, kFullLinks = 2, kHalfLinks = 3, kCounters = 4 };

//! What the host learns of a build, in one copy: the counters and the domain.
struct BuildSummary {
  std::uint32_t counters[kCounters];
  Domain domain;
};

//! The neighbor lists look keys up in a map over all boxes (box key -> compact id, or kNoBox)
//! when there are at most this many boxes, and at most kMapBoxesPerParticle per particle;
//! otherwise by a search among the non-empty keys (docs/design.md §12, "The step on the GPU").
constexpr std::uint64_t kMapBoxes = std::uint64_t(1) << 24;
constexpr std::uint64_t kMapBoxesPerParticle = 64;
constexpr std::uint32_t kNoBox = 0xFFFFFFFFu;

//! The builder's scratch memory, sized once for (dim, level, N).
struct Scratch {
  gpu::DeviceBuffer<std::uint64_t> keys;         //!< N words: keys in input order (the sort's input)
  gpu::DeviceBuffer<std::uint64_t> sorted_keys;  //!< N words: keys in sorted order (the sort's output)
  gpu::DeviceBuffer<std::uint32_t> index;        //!< N: identity (the sort's input values)
  gpu::DeviceBuffer<std::uint32_t> full_count, half_count;  //!< per box + 1 (compact or dense)
  gpu::DeviceBuffer<std::uint32_t> counters;                //!< kCounters entries
  gpu::DeviceBuffer<std::uint32_t> box_map;  //!< nbox entries when the lists use the map, else none
  bool map_clear = false;  //!< box_map is kNoBox everywhere (clear_map ran after the last lists)
  gpu::DeviceBuffer<BuildSummary> summary;   //!< the counters and the domain, gathered for one copy
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
//! The same from the bounds the particles carry (p.bounds_valid: their drift reduced them).
void domain_from_bounds(const DeviceParticles& p, Scratch& s);

// keys, sort
//! Keys of at most 32 bits (dim * level) are computed and sorted as 32-bit words, stored in the
//! first half of Scratch::keys / sorted_keys; wider ones as 64-bit words.
constexpr bool narrow_keys(int bits) { return bits <= 32; }
//! Calls f(Key{}) with the key word of `bits`-bit keys: std::uint32_t or std::uint64_t.
template <class F>
void with_key_type(int bits, F&& f) {
  if (narrow_keys(bits))
    f(std::uint32_t{});
  else
    f(std::uint64_t{});
}
//! A key buffer seen as words of type Key.
template <class Key>
Key* key_data(gpu::DeviceBuffer<std::uint64_t>& b) {
  return reinterpret_cast<Key*>(b.data());
}
template <class Key>
const Key* key_data(const gpu::DeviceBuffer<std::uint64_t>& b) {
  return reinterpret_cast<const Key*>(b.data());
}
//! CUB temporary bytes of the sort.
std::size_t sort_temp_bytes(std::size_t n, int bits);
//! s.keys = Morton keys at `level` over s.domain (narrow_keys: 32-bit words), s.index = identity.
void compute_keys(const DeviceParticles& p, int level, Scratch& s);
//! (s.keys, s.index) sorted into (s.sorted_keys, t.order) over dim*level bits.
void sort_keys(DeviceTree& t, Scratch& s);

// boxes
std::size_t boxes_temp_bytes(std::size_t n);
//! t.box_key, box_first, particle_compact_box from s.sorted_keys; M into s.counters[kBoxes] and
//! the largest box into s.counters[kMaxCount] (both stay on the device: no host read).
void find_boxes(DeviceTree& t, Scratch& s);

// neighbors
std::size_t neighbors_temp_bytes(std::size_t boxes);
//! Compact full and half lists of the non-empty boxes (M read on the device: the kernels and
//! scans run over the capacity, min(N, nbox) boxes); the totals into s.counters[kFullLinks /
//! kHalfLinks]. Ids past an id buffer's capacity are not written: the builder checks the totals
//! in the summary and refills after growing (refill_compact_lists).
void build_compact_lists(DeviceTree& t, Scratch& s);
//! The fill again, after the id buffers grew to the totals (t.near_*_links set).
void refill_compact_lists(DeviceTree& t, Scratch& s);
//! Resets the map's entries of this build's boxes to kNoBox (after the last fill), so the next
//! build need not clear all nbox entries.
void clear_map(const DeviceTree& t, Scratch& s);
//! s.summary = the counters, the list totals (from t's offsets; 0 for a build without lists) and
//! the domain (one small kernel), then one copy to the host.
BuildSummary read_summary(Scratch& s, const DeviceTree& t);

// dense
std::size_t dense_temp_bytes(std::uint64_t nbox);
//! t.box_start, particle_box, nonempty and the dense full/half lists.
void build_dense(DeviceTree& t, Scratch& s);

}  // namespace nf::tree_gpu
