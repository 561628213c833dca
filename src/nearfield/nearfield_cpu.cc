#include "nearfield/nearfield_cpu.h"

#include <omp.h>

#include <algorithm>

#include "physics/interaction.h"
#include "nearfield/traversal.h"

namespace nf {
namespace {

// Full-list evaluation of one box: each particle against its near field, added into acc for the
// box's particles only. Shared by serial and OpenMP.
template <int D, class T, bool Counting>
unsigned long long full_box(const HostNearField<T>& f, std::uint32_t b) {
  const Tree& t = *f.tree;
  const SoftenedGravity<D, T> g{f.eps2};
  unsigned long long count = 0;
  for (std::uint32_t i = t.box_start[b]; i < t.box_start[b + 1]; ++i)
    add_into(f.acc + i, near_field_sum<Counting>(g, f.bodies, t.box_start.data(), t.full.offset.data(),
                                                 t.full.ids.data(), b, i, count));
  return count;
}

// Newton-3 evaluation of one box into `acc`: pairs inside the box once, then the box against
// each neighbor with a larger index.
template <int D, class T, bool Counting>
unsigned long long half_box(const HostNearField<T>& f, std::uint32_t b, Acc4<T>* acc) {
  const Tree& t = *f.tree;
  const SoftenedGravity<D, T> g{f.eps2};
  unsigned long long count = 0;
  const std::uint32_t begin = t.box_start[b], end = t.box_start[b + 1];
  for (std::uint32_t i = begin; i < end; ++i)
    for (std::uint32_t j = i + 1; j < end; ++j) {
      g.mutual(f.bodies[i], f.bodies[j], acc[i], acc[j]);
      if constexpr (Counting) ++count;
    }
  for (std::uint32_t k = t.half.offset[b]; k < t.half.offset[b + 1]; ++k) {
    const std::uint32_t nb = t.half.ids[k];
    for (std::uint32_t i = begin; i < end; ++i)
      for (std::uint32_t j = t.box_start[nb]; j < t.box_start[nb + 1]; ++j) {
        g.mutual(f.bodies[i], f.bodies[j], acc[i], acc[j]);
        if constexpr (Counting) ++count;
      }
  }
  return count;
}

template <int D, class T, bool Counting>
void serial(const HostNearField<T>& f) {
  unsigned long long count = 0;
  const std::uint64_t end = computed_dense_end(f);
  for (std::uint32_t b = 0; b < end; ++b) count += full_box<D, T, Counting>(f, b);
  if constexpr (Counting) *f.counter += count;
}

template <int D, class T, bool Counting>
void n3(const HostNearField<T>& f) {
  unsigned long long count = 0;
  const std::uint64_t end = computed_dense_end(f);
  for (std::uint32_t b = 0; b < end; ++b) count += half_box<D, T, Counting>(f, b, f.acc);
  if constexpr (Counting) *f.counter += count;
}

template <int D, class T, bool Counting>
void omp(const HostNearField<T>& f) {
  const std::vector<std::uint32_t>& boxes = f.tree->nonempty;
  const long nb = static_cast<long>(computed_nonempty(f));
  unsigned long long count = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : count)
  for (long k = 0; k < nb; ++k) count += full_box<D, T, Counting>(f, boxes[k]);
  if constexpr (Counting) *f.counter += count;
}

// First non-empty box (index into `nonempty`) of each of `parts` contiguous ranges of the first
// `boxes` non-empty boxes, holding about equal numbers of Newton-3 pairs (own box n(n-1)/2, plus n
// times each half neighbor's count).
std::vector<std::size_t> balanced_ranges(const Tree& t, int parts, std::size_t boxes) {
  std::vector<double> prefix(boxes + 1, 0.0);
  for (std::size_t k = 0; k < boxes; ++k) {
    const std::uint32_t b = t.nonempty[k];
    const double n = t.box_count(b);
    double around = 0;
    for (std::uint32_t l = t.half.offset[b]; l < t.half.offset[b + 1]; ++l) around += t.box_count(t.half.ids[l]);
    prefix[k + 1] = prefix[k] + n * (n - 1) / 2 + n * around + 1;  // + 1: the box's own overhead
  }
  std::vector<std::size_t> first(static_cast<std::size_t>(parts) + 1, boxes);
  first[0] = 0;
  for (int r = 1; r < parts; ++r) {
    const double target = prefix.back() * r / parts;
    first[r] = static_cast<std::size_t>(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin());
    first[r] = std::max(first[r], first[r - 1]);
  }
  return first;
}

// Deterministic by construction: thread r always owns the same range of boxes (static, balanced
// by pair count, not by the order threads happen to finish), adds into its own buffer in box
// order, and the buffers are summed in thread order. A dynamic schedule would move boxes between
// buffers from run to run and change the rounding of the sums.
template <int D, class T, bool Counting>
void omp_n3(const HostNearField<T>& f) {
  const std::size_t n = f.tree->particles();
  std::vector<Acc4<T>>& buffers = *f.scratch;
  std::vector<std::size_t> first;
  int team = 1;
  unsigned long long count = 0;
#pragma omp parallel reduction(+ : count)
  {
#pragma omp single
    {
      team = omp_get_num_threads();
      first = balanced_ranges(*f.tree, team, computed_nonempty(f));
      buffers.resize(n * static_cast<std::size_t>(team));
    }
    const int r = omp_get_thread_num();
    Acc4<T>* mine = buffers.data() + n * static_cast<std::size_t>(r);
    std::fill(mine, mine + n, Acc4<T>{0, 0, 0, 0});
    for (std::size_t k = first[r]; k < first[r + 1]; ++k) count += half_box<D, T, Counting>(f, f.tree->nonempty[k], mine);
#pragma omp barrier
#pragma omp for schedule(static)
    for (long i = 0; i < static_cast<long>(n); ++i) {
      Acc4<T> a{0, 0, 0, 0};
      for (int t = 0; t < team; ++t) {
        const Acc4<T>& p = buffers[n * static_cast<std::size_t>(t) + static_cast<std::size_t>(i)];
        a.x += p.x;
        a.y += p.y;
        a.z += p.z;
      }
      add_into(f.acc + i, a);
    }
  }
  if constexpr (Counting) *f.counter += count;
}

}  // namespace

template <int D, class T>
void cpu_serial(const HostNearField<T>& f) {
  f.counter ? serial<D, T, true>(f) : serial<D, T, false>(f);
}
template <int D, class T>
void cpu_n3(const HostNearField<T>& f) {
  f.counter ? n3<D, T, true>(f) : n3<D, T, false>(f);
}
template <int D, class T>
void cpu_omp(const HostNearField<T>& f) {
  f.counter ? omp<D, T, true>(f) : omp<D, T, false>(f);
}
template <int D, class T>
void cpu_omp_n3(const HostNearField<T>& f) {
  f.counter ? omp_n3<D, T, true>(f) : omp_n3<D, T, false>(f);
}

NF_EXPORT_CPU_NEAR_FIELD(cpu_serial, cpu_serial)
NF_EXPORT_CPU_NEAR_FIELD(cpu_n3, cpu_n3)
NF_EXPORT_CPU_NEAR_FIELD(cpu_omp, cpu_omp)
NF_EXPORT_CPU_NEAR_FIELD(cpu_omp_n3, cpu_omp_n3)

}  // namespace nf
