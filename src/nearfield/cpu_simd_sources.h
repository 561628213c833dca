#pragma once
//! The host side of cpu-simd (cpu_simd.cc), compiled once: a box's near field gathered into
//! structure-of-arrays buffers, the reactions scattered back, the box kernels' table, and the
//! colour phases of the Newton-3 OpenMP kernel and the OpenMP kernels' dealing of work.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/per_shape.h"
#include "nearfield/nearfield_cpu.h"

namespace nf::simd {

//! The near field of one target box, gathered: own box at [0, own), its neighbors' particles at
//! [own_end, size), zeros after (one vector, so a masked last vector never reads past the end).
template <class T>
struct Sources {
  std::vector<T> x, y, z, m;
  std::vector<T> rx, ry, rz;  //!< Newton-3: the reactions on the sources
  std::size_t own = 0, own_end = 0, size = 0;
  std::uint32_t first = 0;  //!< the own box's first sorted particle
};

//! One thread's buffers, kept between calls (they only grow).
template <class T>
Sources<T>& thread_sources() {
  thread_local Sources<T> s;
  return s;
}

//! Gathers compact box k and the boxes of `lists` (full lists, or half lists for Newton-3) into
//! s; with `pad_own` the neighbors start at a multiple of `lanes` (whole vectors after the own box).
template <int D, class T>
void gather(const Tree& t, const Body<T>* bodies, std::uint32_t k, const NeighborLists& lists, std::size_t lanes,
            bool pad_own, bool reactions, Sources<T>& s) {
  s.own = t.compact_count(k);
  s.first = t.box_first[k];
  std::size_t others = 0;
  for (std::uint32_t l = lists.offset[k]; l < lists.offset[k + 1]; ++l) others += t.compact_count(lists.ids[l]);
  s.own_end = pad_own ? (s.own + lanes - 1) / lanes * lanes : s.own;
  s.size = s.own_end + others;
  const std::size_t cap = s.size + lanes;
  for (std::vector<T>* v : {&s.x, &s.y, &s.z, &s.m})
    if (v->size() < cap) v->resize(cap);
  std::size_t o = 0;
  const auto copy = [&](std::uint32_t box) {
    for (std::uint32_t p = t.box_first[box]; p < t.box_first[box + 1]; ++p, ++o) {
      const Body<T>& b = bodies[p];
      s.x[o] = b.x;
      s.y[o] = b.y;
      if constexpr (D == 3) s.z[o] = b.z;
      s.m[o] = b.m;
    }
  };
  const auto zeros = [&](std::size_t end) {
    for (; o < end; ++o) s.x[o] = s.y[o] = s.z[o] = s.m[o] = 0;
  };
  copy(k);
  zeros(s.own_end);
  for (std::uint32_t l = lists.offset[k]; l < lists.offset[k + 1]; ++l) copy(lists.ids[l]);
  zeros(cap);
  if (reactions)
    for (std::vector<T>* v : {&s.rx, &s.ry, &s.rz}) {
      if (v->size() < cap) v->resize(cap);
      std::fill(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(cap), T(0));
    }
}

//! Newton-3: adds the reactions gathered in s (same order as gather) into the sorted outputs.
template <int D, class T>
void scatter(const Tree& t, std::uint32_t k, const NeighborLists& lists, const Sources<T>& s, Acc4<T>* acc) {
  std::size_t o = 0;
  const auto add = [&](std::uint32_t box) {
    for (std::uint32_t p = t.box_first[box]; p < t.box_first[box + 1]; ++p, ++o)
      add_into(acc + p, Acc4<T>{s.rx[o], s.ry[o], D == 3 ? s.rz[o] : T(0), 0});
  };
  add(k);
  o = s.own_end;
  for (std::uint32_t l = lists.offset[k]; l < lists.offset[k + 1]; ++l) add(lists.ids[l]);
}

//! One box of the near field, compact id `box`: full lists, computed into f.acc for its sorted
//! particles [begin, end); Newton-3, with begin = end the whole box into f.acc, with begin < end
//! only its targets of local indices [begin, end), left in s for the caller to scatter (a chunk of
//! a crowded box). Returns the interactions it evaluated.
template <class T>
using BoxFn = unsigned long long (*)(const HostNearField<T>& f, std::uint32_t box, std::uint32_t begin,
                                     std::uint32_t end, Sources<T>& s);
//! What each instruction set's copy of this file exports: full-list and Newton-3 boxes, with and
//! without the zero-distance guard.
struct BoxKernels {
  PerShape<BoxFn> full, full_guarded, n3, n3_guarded;
};

//! A run of consecutive boxes, compact ids [first, last), that one thread computes in turn.
struct BoxRun {
  std::uint32_t first, last;
};

//! Newton-3 over threads: the first m compact boxes cut into blocks (the boxes of one Morton parent:
//! 2 x 2 (x 2) boxes, consecutive compact ids) in 2^D colour phases by the parities of the blocks'
//! coordinates (returned: blocks by colour, phase c at [first[c], first[c+1])). A box writes only
//! into itself and its neighbors, so a block writes at most one box beyond its edge; two blocks of
//! one colour lie 2 blocks (4 boxes) apart along some axis, so no two threads write one particle in
//! a phase. A thread runs a block's boxes in key order, so their shared neighbors stay in cache; each
//! particle receives its sums in a fixed order, whatever the thread count.
inline std::vector<BoxRun> colour_phases(const Tree& t, std::uint32_t m, std::vector<std::uint32_t>& first) {
  const int colours = 1 << t.dim;
  std::vector<std::vector<BoxRun>> by_colour(colours);
  for (std::uint32_t k = 0; k < m;) {
    const std::uint64_t parent = t.box_key[k] >> t.dim;
    std::uint32_t last = k + 1;
    while (last < m && t.box_key[last] >> t.dim == parent) ++last;
    int c = 0;  // bit a of a Morton key is the lowest bit of the coordinate along axis a
    for (int a = 0; a < t.dim; ++a) c |= static_cast<int>(parent >> a & 1u) << a;
    by_colour[c].push_back({k, last});
    k = last;
  }
  std::vector<BoxRun> blocks;
  first.assign(1, 0);
  for (const std::vector<BoxRun>& runs : by_colour) {
    blocks.insert(blocks.end(), runs.begin(), runs.end());
    first.push_back(static_cast<std::uint32_t>(blocks.size()));
  }
  return blocks;
}

//! Full lists over threads: a box's targets [begin, end) against its whole near field. Boxes of more
//! than 256 particles are cut into items of 256 targets (each gathers the near field again, 1/256 of
//! its work), so one crowded box spreads over threads. (Newton-3 cuts crowded boxes differently:
//! two items of one box would write the same reactions, so its chunks get buffers of their own.)
struct Item {
  std::uint32_t box, begin, end;
};
constexpr std::uint32_t kItemTargets = 256;

//! Newton-3 over threads, crowded boxes: a box of more than kCrowded particles takes one thread
//! for all its pairs, and neighbouring crowded boxes (a cluster's core) never share a colour phase,
//! so they would run one after another on one thread (3D Plummer 200000 at level 5 on 16 cores:
//! slower than on one). Its targets are cut into chunks of kChunkTargets instead, computed in
//! parallel before their phase into buffers of their own (sums and reactions), which the box's
//! block then scatters in chunk order where the box would have run: the same bits at any thread
//! count (the chunks depend on the box alone), each crowded box's pairs still computed once.
inline constexpr std::uint32_t kCrowded = 1024, kChunkTargets = 512;

inline bool crowded(const Tree& t, std::uint32_t k) { return t.compact_count(k) > kCrowded; }

//! The chunks of the crowded boxes, block by block (item[of_block[q] .. of_block[q + 1]) are block
//! q's, its boxes in order; begin and end are indices within the box).
struct CrowdedChunks {
  std::vector<Item> item;
  std::vector<std::uint32_t> of_block;
};

inline CrowdedChunks crowded_chunks(const Tree& t, const std::vector<BoxRun>& blocks) {
  CrowdedChunks c;
  c.of_block.reserve(blocks.size() + 1);
  for (const BoxRun& b : blocks) {
    c.of_block.push_back(static_cast<std::uint32_t>(c.item.size()));
    for (std::uint32_t k = b.first; k < b.last; ++k)
      if (crowded(t, k))
        for (std::uint32_t i = 0; i < t.compact_count(k); i += kChunkTargets)
          c.item.push_back({k, i, std::min(t.compact_count(k), i + kChunkTargets)});
  }
  c.of_block.push_back(static_cast<std::uint32_t>(c.item.size()));
  return c;
}

//! Runs work(q, the thread's sources) for q in [first[c], first[c+1]) over the threads, phase c
//! after phase c - 1, dealt dynamically in grains of about 1/64 of a thread's share (a box of a few
//! particles takes a microsecond: a scheduling step each would cost as much); before each phase c,
//! pre(c, i) for i in [0, pre_count(c)), one at a time (crowded boxes' chunks). Returns the sum of
//! what work and pre return.
template <class T, class Work, class Pre, class PreCount>
unsigned long long over_threads(const std::vector<std::uint32_t>& first, Work&& work, Pre&& pre,
                                PreCount&& pre_count) {
  unsigned long long count = 0;
#pragma omp parallel reduction(+ : count)
  {
    Sources<T>& s = thread_sources<T>();
    for (std::size_t c = 0; c + 1 < first.size(); ++c) {
      const long chunks = pre_count(c);
      if (chunks > 0) {
#pragma omp for schedule(dynamic, 1)
        for (long i = 0; i < chunks; ++i) count += pre(c, i);
      }
      const long begin = first[c], end = first[c + 1];
      const long grain = std::max(1L, (end - begin) / (64L * omp_get_num_threads()));
#pragma omp for schedule(dynamic, grain)
      for (long q = begin; q < end; ++q) count += work(q, s);
    }
  }
  return count;
}

template <class T, class Work>
unsigned long long over_threads(const std::vector<std::uint32_t>& first, Work&& work) {
  return over_threads<T>(
      first, std::forward<Work>(work), [](std::size_t, long) { return 0ull; }, [](std::size_t) { return 0L; });
}

//! Newton-3 over threads: the first m compact boxes in colour phases of blocks (colour_phases),
//! crowded boxes in chunks computed before their phase (crowded_chunks) and scattered in order
//! where the box runs. Returns the interactions evaluated.
template <int D, class T>
unsigned long long newton3_over_threads(const HostNearField<T>& f, BoxFn<T> box, std::uint32_t m) {
  const Tree& t = *f.tree;
  std::vector<std::uint32_t> first;
  const std::vector<BoxRun> blocks = colour_phases(t, m, first);
  const CrowdedChunks chunks = crowded_chunks(t, blocks);
  std::vector<Sources<T>> parts(chunks.item.size());  // a chunk's sums and reactions
  const auto chunk0 = [&](std::size_t phase) { return chunks.of_block[first[phase]]; };
  return over_threads<T>(
      first,
      [&](long q, Sources<T>& s) {
        unsigned long long n = 0;
        std::uint32_t c = chunks.of_block[q];
        for (std::uint32_t k = blocks[q].first; k < blocks[q].last; ++k)
          if (!crowded(t, k))
            n += box(f, k, 0, 0, s);
          else  // its chunks, computed before the phase, scattered in order
            for (; c < chunks.of_block[q + 1] && chunks.item[c].box == k; ++c)
              scatter<D>(t, k, t.near_half, parts[c], f.acc);
        return n;
      },
      [&](std::size_t phase, long i) {  // before a phase: the chunks of its crowded boxes
        const Item& it = chunks.item[chunk0(phase) + std::size_t(i)];
        return box(f, it.box, it.begin, it.end, parts[chunk0(phase) + std::size_t(i)]);
      },
      [&](std::size_t phase) { return long(chunk0(phase + 1) - chunk0(phase)); });
}

}  // namespace nf::simd
