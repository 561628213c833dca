#pragma once
//! The host side of cpu-simd (cpu_simd.cc), compiled once: a box's near field gathered into
//! structure-of-arrays buffers, the reactions scattered back, the box kernels' table, and the
//! colour phases of the Newton-3 OpenMP kernel.
#include <algorithm>
#include <cstdint>
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

//! One box of the near field, compact id `box`, computed into f.acc for its sorted particles
//! [begin, end) (full lists; a Newton-3 kernel always computes the whole box); returns the
//! interactions it evaluated.
template <class T>
using BoxFn = unsigned long long (*)(const HostNearField<T>& f, std::uint32_t box, std::uint32_t begin,
                                     std::uint32_t end, Sources<T>& s);
//! What each instruction set's copy of this file exports: full-list and Newton-3 boxes, with and
//! without the zero-distance guard.
struct BoxKernels {
  PerShape<BoxFn> full, full_guarded, n3, n3_guarded;
};

//! Newton-3 over threads: the first m compact boxes in 3^D colour phases (returned: box ids by
//! colour, phase c at [first[c], first[c+1])) by their coordinates mod 3. A box writes
//! only into itself and its neighbors, and two boxes of one colour lie 3 or more boxes apart along
//! some axis, so no two threads write one particle in a phase; each particle receives its sums in
//! a fixed order, so the result does not depend on the thread count.
inline std::vector<std::uint32_t> colour_phases(const Tree& t, std::uint32_t m, std::vector<std::uint32_t>& first) {
  const int colours = t.dim == 2 ? 9 : 27;
  std::vector<std::uint8_t> colour(m);
  first.assign(colours + 1, 0);
  for (std::uint32_t k = 0; k < m; ++k) {
    int c = 0;
    for (int a = 0, scale = 1; a < t.dim; ++a, scale *= 3) {
      std::uint64_t x = 0;  // the box's coordinate along axis a: every dim-th bit of its Morton key
      for (int b = 0; b < t.level; ++b) x |= ((t.box_key[k] >> (t.dim * b + a)) & 1u) << b;
      c += static_cast<int>(x % 3) * scale;
    }
    colour[k] = static_cast<std::uint8_t>(c);
    ++first[c + 1];
  }
  for (int c = 0; c < colours; ++c) first[c + 1] += first[c];
  std::vector<std::uint32_t> boxes(m), next(first.begin(), first.end() - 1);
  for (std::uint32_t k = 0; k < m; ++k) boxes[next[colour[k]]++] = k;
  return boxes;
}

}  // namespace nf::simd
