#pragma once
//! The host side of cpu-simd (cpu_simd.cc), compiled once: a box's near field gathered into
//! structure-of-arrays buffers, the reactions scattered back, the box kernels' table, and the
//! colour phases of the Newton-3 OpenMP kernel and the OpenMP kernels' dealing of work.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/errors.h"
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

//! The particles of the boxes of compact box k's list in `lists` (not box k's own).
inline std::size_t listed_particles(const Tree& t, std::uint32_t k, const NeighborLists& lists) {
  std::size_t n = 0;
  for (std::uint32_t l = lists.offset[k]; l < lists.offset[k + 1]; ++l) n += t.compact_count(lists.ids[l]);
  return n;
}

//! Gathers compact box k and the boxes of `lists` (full lists, or half lists for Newton-3) into
//! s; with `pad_own` the neighbors start at a multiple of `lanes` (whole vectors after the own box).
template <int D, class T>
void gather(const Tree& t, const Body<T>* bodies, std::uint32_t k, const NeighborLists& lists, std::size_t lanes,
            bool pad_own, bool reactions, Sources<T>& s) {
  s.own = t.compact_count(k);
  s.first = t.box_first[k];
  s.own_end = pad_own ? (s.own + lanes - 1) / lanes * lanes : s.own;
  s.size = s.own_end + listed_particles(t, k, lists);
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

//! Newton-3: adds reactions rx, ry, rz (box k's particles from 0, then its list's boxes in order
//! from `listed_at`) into the sorted outputs.
template <int D, class T>
void scatter(const Tree& t, std::uint32_t k, const NeighborLists& lists, const T* rx, const T* ry, const T* rz,
             std::size_t listed_at, Acc4<T>* acc) {
  std::size_t o = 0;
  const auto add = [&](std::uint32_t box) {
    for (std::uint32_t p = t.box_first[box]; p < t.box_first[box + 1]; ++p, ++o)
      add_into(acc + p, Acc4<T>{rx[o], ry[o], D == 3 ? rz[o] : T(0), 0});
  };
  add(k);
  o = listed_at;
  for (std::uint32_t l = lists.offset[k]; l < lists.offset[k + 1]; ++l) add(lists.ids[l]);
}

//! The same for the reactions gathered in s (the layout of gather).
template <int D, class T>
void scatter(const Tree& t, std::uint32_t k, const NeighborLists& lists, const Sources<T>& s, Acc4<T>* acc) {
  scatter<D>(t, k, lists, s.rx.data(), s.ry.data(), s.rz.data(), s.own_end, acc);
}

//! Newton-3, a crowded box's chunk: the sums and reactions a chunk left in s (its box, then its
//! half-list neighbours, as gathered) copied out without the own box's padding into rx, ry, rz
//! (each s.own plus the neighbours' particles long).
template <int D, class T>
void copy_reactions(const Sources<T>& s, T* rx, T* ry, T* rz) {
  const auto out = [&](const std::vector<T>& from, T* to) {
    const auto at = [&](std::size_t i) { return from.begin() + static_cast<std::ptrdiff_t>(i); };
    std::copy(at(0), at(s.own), to);
    std::copy(at(s.own_end), at(s.size), to + s.own);
  };
  out(s.rx, rx);
  out(s.ry, ry);
  if constexpr (D == 3) out(s.rz, rz);
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

//! Newton-3 over threads, crowded boxes (CrowdRule below): a whole box takes one thread for all
//! its pairs, and neighbouring crowded boxes (a cluster's core) never share a colour phase,
//! so they would run one after another on one thread (3D Plummer 200000 at level 5 on 16 cores:
//! slower than on one). A crowded box's targets are cut into chunks instead, computed in
//! parallel at the start of their phase; each chunk's sums and reactions (its box's gathered near
//! field) are copied into a shared buffer, and once a wave of chunks is done, each block scatters
//! its chunks in order (boxes in order, chunks in order); then the phase's other boxes run. A
//! particle thus receives its sums in an order fixed by the tree (its block's crowded boxes' chunks,
//! then the block's other boxes), the same bits at any thread count and any wave size, each
//! crowded box's pairs still computed once. A wave holds at most kWaveValues buffered values, or one
//! chunk a thread where those need more (one box of a million particles: its chunks' near field
//! is a million sources each), so memory stays linear in N: every chunk had kept its own gathered
//! copy until the end of the call, 7 values a source (uniform-exact 3D, 2000 particles a box, 1M
//! particles: 1.3 GB at its peak, against 95 MB for cpu-simd-omp).
inline constexpr std::uint32_t kCrowded = 1024, kChunkTargets = 512;
inline constexpr std::size_t kWaveValues = std::size_t(1) << 24;

//! Which boxes are crowded, and their chunks' size. `share` (the default): more than 256
//! particles and more than 1/1024 of all the Newton-3 pairs (own pairs plus half-list pairs),
//! chunks of 256, so that a cluster's core spreads over all threads. `size`
//! (NEARFIELD_N3_CROWD=size, the rule until 1df24e4): more than kCrowded particles, chunks of
//! kChunkTargets. On the 16-core H100 host, 3D Plummer N = 200000 at level 5, 16 threads: 188-195
//! ms against 268-297 (docs/design.md §3 has both measured).
struct CrowdRule {
  std::uint32_t min_count = kCrowded, chunk = kChunkTargets;
  std::vector<char> box;  //!< share: per compact box, crowded or not (empty: by size alone)
  bool operator()(const Tree& t, std::uint32_t k) const {
    return box.empty() ? t.compact_count(k) > min_count : box[k] != 0;
  }
};

inline CrowdRule crowd_rule(const Tree& t, std::uint32_t m) {
  CrowdRule r;
  if (env::choice("NEARFIELD_N3_CROWD", {"size", "share"}) == "size") return r;
  r.min_count = 256;
  r.chunk = 256;
  std::vector<double> pairs(m);
  double total = 0;
  for (std::uint32_t k = 0; k < m; ++k) {
    const double c = t.compact_count(k);
    pairs[k] = c * (c - 1) / 2 + c * double(listed_particles(t, k, t.near_half));
    total += pairs[k];
  }
  r.box.assign(m, 0);
  for (std::uint32_t k = 0; k < m; ++k)
    r.box[k] = t.compact_count(k) > r.min_count && pairs[k] > total / 1024;
  return r;
}

//! The chunks of the crowded boxes, block by block (item[of_block[q] .. of_block[q + 1]) are block
//! q's, its boxes in order; begin and end are indices within the box).
struct CrowdedChunks {
  std::vector<Item> item;
  std::vector<std::uint32_t> of_block;
};

inline CrowdedChunks crowded_chunks(const Tree& t, const std::vector<BoxRun>& blocks, const CrowdRule& crowded) {
  CrowdedChunks c;
  c.of_block.reserve(blocks.size() + 1);
  for (const BoxRun& b : blocks) {
    c.of_block.push_back(static_cast<std::uint32_t>(c.item.size()));
    for (std::uint32_t k = b.first; k < b.last; ++k)
      if (crowded(t, k))
        for (std::uint32_t i = 0; i < t.compact_count(k); i += crowded.chunk)
          c.item.push_back({k, i, std::min(t.compact_count(k), i + crowded.chunk)});
  }
  c.of_block.push_back(static_cast<std::uint32_t>(c.item.size()));
  return c;
}

//! Runs work(q, the thread's sources) for q in [first[c], first[c+1]) over the threads, phase c
//! after phase c - 1, dealt dynamically in grains of about 1/64 of a thread's share (a box of a few
//! particles takes a microsecond: a scheduling step each would cost as much). Returns the sum of
//! what work returns.
template <class T, class Work>
unsigned long long over_threads(const std::vector<std::uint32_t>& first, Work&& work) {
  unsigned long long count = 0;
#pragma omp parallel reduction(+ : count)
  {
    Sources<T>& s = thread_sources<T>();
    for (std::size_t c = 0; c + 1 < first.size(); ++c) {
      const long begin = first[c], end = first[c + 1];
      const long grain = std::max(1L, (end - begin) / (64L * omp_get_num_threads()));
#pragma omp for schedule(dynamic, grain)
      for (long q = begin; q < end; ++q) count += work(q, s);
    }
  }
  return count;
}

//! Newton-3 over threads: the first m compact boxes in colour phases of blocks (colour_phases),
//! crowded boxes in chunks computed and scattered in waves at the start of their phase (see
//! CrowdRule). Returns the interactions evaluated. NEARFIELD_N3_WAVE=V caps a wave at V buffered
//! values instead of kWaveValues (tests: several waves on small inputs).
template <int D, class T>
unsigned long long newton3_over_threads(const HostNearField<T>& f, BoxFn<T> box, std::uint32_t m) {
  const Tree& t = *f.tree;
  std::vector<std::uint32_t> first;
  const std::vector<BoxRun> blocks = colour_phases(t, m, first);
  const CrowdRule crowded = crowd_rule(t, m);
  const CrowdedChunks chunks = crowded_chunks(t, blocks, crowded);
  const std::size_t n = chunks.item.size();
  // A chunk's buffered values: D per particle of its box and half-list neighbours.
  std::vector<std::size_t> len(n);
  for (std::size_t c = 0; c < n; ++c) {
    const std::uint32_t k = chunks.item[c].box;
    len[c] = c > 0 && chunks.item[c - 1].box == k ? len[c - 1]  // a box's chunks are consecutive
                                                  : D * (t.compact_count(k) + listed_particles(t, k, t.near_half));
  }
  // Waves: each phase's chunks (chunk order) cut where the next would pass the cap.
  const std::size_t cap = std::size_t(env::integer("NEARFIELD_N3_WAVE", 1, 1LL << 40, kWaveValues));
  const std::size_t per_wave = std::size_t(omp_get_max_threads());
  std::vector<std::vector<std::uint32_t>> waves(first.size() - 1);  // per phase: wave starts, then the end
  std::size_t most = 0;
  for (std::size_t ph = 0; ph + 1 < first.size(); ++ph) {
    const std::uint32_t c0 = chunks.of_block[first[ph]], c1 = chunks.of_block[first[ph + 1]];
    std::vector<std::uint32_t>& w = waves[ph];
    std::size_t held = 0;
    for (std::uint32_t c = c0; c < c1; ++c) {
      if (w.empty() || (held + len[c] > cap && c - w.back() >= per_wave)) w.push_back(c), held = 0;
      held += len[c];
      most = std::max(most, held);
    }
    w.push_back(c1);
  }
  const std::unique_ptr<T[]> buffer(new T[most]);  // not zeroed: every value is written before it is read
  std::vector<std::size_t> offset(n);  // chunk c's values within its wave's buffer
  for (const std::vector<std::uint32_t>& w : waves)
    for (std::size_t i = 0; i + 1 < w.size(); ++i)
      for (std::size_t c = w[i], o = 0; c < w[i + 1]; o += len[c], ++c) offset[c] = o;
  const auto values = [&](std::size_t c, int axis) {
    return axis < D ? buffer.get() + offset[c] + std::size_t(axis) * (len[c] / D) : nullptr;
  };
  unsigned long long count = 0;
#pragma omp parallel reduction(+ : count)
  {
    Sources<T>& s = thread_sources<T>();
    for (std::size_t ph = 0; ph + 1 < first.size(); ++ph) {
      const std::vector<std::uint32_t>& w = waves[ph];
      for (std::size_t i = 0; i + 1 < w.size(); ++i) {
        const long c0 = w[i], c1 = w[i + 1];
#pragma omp for schedule(dynamic, 1)
        for (long c = c0; c < c1; ++c) {
          const Item& it = chunks.item[std::size_t(c)];
          count += box(f, it.box, it.begin, it.end, s);
          copy_reactions<D>(s, values(std::size_t(c), 0), values(std::size_t(c), 1), values(std::size_t(c), 2));
        }
        // The blocks with chunks in [c0, c1): each scatters its own in order.
        const long q0 = long(std::upper_bound(chunks.of_block.begin() + first[ph], chunks.of_block.begin() + first[ph + 1],
                                              std::uint32_t(c0)) - chunks.of_block.begin()) - 1;
        const long q1 = long(std::lower_bound(chunks.of_block.begin() + first[ph], chunks.of_block.begin() + first[ph + 1],
                                              std::uint32_t(c1)) - chunks.of_block.begin());
#pragma omp for schedule(dynamic, 1)
        for (long q = q0; q < q1; ++q)
          for (std::uint32_t c = std::max(std::uint32_t(c0), chunks.of_block[q]);
               c < std::min(std::uint32_t(c1), chunks.of_block[q + 1]); ++c)
            scatter<D>(t, chunks.item[c].box, t.near_half, values(c, 0), values(c, 1), values(c, 2),
                       t.compact_count(chunks.item[c].box), f.acc);
      }
      const long begin = first[ph], end = first[ph + 1];
      const long grain = std::max(1L, (end - begin) / (64L * omp_get_num_threads()));
#pragma omp for schedule(dynamic, grain)
      for (long q = begin; q < end; ++q)
        for (std::uint32_t k = blocks[q].first; k < blocks[q].last; ++k)
          if (!crowded(t, k)) count += box(f, k, 0, 0, s);
    }
  }
  return count;
}

}  // namespace nf::simd
