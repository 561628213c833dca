#include "nearfield/nearfield_cpu.h"

#include <omp.h>

#include <algorithm>

#include "common/interaction.h"

namespace nf {
namespace {

// Full-list evaluation of one box: each particle against the rest of its box, then every
// neighbor's particles; writes acc for the box's particles only. Shared by serial and OpenMP.
template <int D, class T, bool Counting>
unsigned long long full_box(const HostNearField<T>& f, std::uint32_t b) {
  const Tree& t = *f.tree;
  const SoftenedGravity<D, T> g{f.eps2};
  unsigned long long count = 0;
  const std::uint32_t begin = t.box_start[b], end = t.box_start[b + 1];
  for (std::uint32_t i = begin; i < end; ++i) {
    Acc4<T> a{0, 0, 0, 0};
    for (std::uint32_t j = begin; j < end; ++j) {
      if (j == i) continue;
      g(f.bodies[i], f.bodies[j], a);
      if constexpr (Counting) ++count;
    }
    for (std::uint32_t k = t.full.offset[b]; k < t.full.offset[b + 1]; ++k) {
      const std::uint32_t nb = t.full.ids[k];
      for (std::uint32_t j = t.box_start[nb]; j < t.box_start[nb + 1]; ++j) {
        g(f.bodies[i], f.bodies[j], a);
        if constexpr (Counting) ++count;
      }
    }
    f.acc[i] = a;
  }
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
  for (std::uint32_t b = 0; b < f.tree->nbox; ++b) count += full_box<D, T, Counting>(f, b);
  if constexpr (Counting) *f.counter += count;
}

template <int D, class T, bool Counting>
void n3(const HostNearField<T>& f) {
  std::fill(f.acc, f.acc + f.tree->particles(), Acc4<T>{0, 0, 0, 0});
  unsigned long long count = 0;
  for (std::uint32_t b = 0; b < f.tree->nbox; ++b) count += half_box<D, T, Counting>(f, b, f.acc);
  if constexpr (Counting) *f.counter += count;
}

template <int D, class T, bool Counting>
void omp(const HostNearField<T>& f) {
  const std::vector<std::uint32_t>& boxes = f.tree->nonempty;
  const long nb = static_cast<long>(boxes.size());
  unsigned long long count = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : count)
  for (long k = 0; k < nb; ++k) count += full_box<D, T, Counting>(f, boxes[k]);
  if constexpr (Counting) *f.counter += count;
}

template <int D, class T, bool Counting>
void omp_n3(const HostNearField<T>& f, std::vector<std::vector<Acc4<T>>>& buffers) {
  const std::vector<std::uint32_t>& boxes = f.tree->nonempty;
  const long nb = static_cast<long>(boxes.size());
  const std::size_t n = f.tree->particles();
  const int threads = omp_get_max_threads();
  buffers.resize(static_cast<std::size_t>(threads));
  unsigned long long count = 0;
#pragma omp parallel num_threads(threads) reduction(+ : count)
  {
    std::vector<Acc4<T>>& mine = buffers[static_cast<std::size_t>(omp_get_thread_num())];
    mine.assign(n, Acc4<T>{0, 0, 0, 0});
    // The work of a box grows with its own and its neighbors' counts, and half lists give the
    // low-index boxes more neighbors: dynamic scheduling in small chunks balances both.
#pragma omp for schedule(dynamic, 4)
    for (long k = 0; k < nb; ++k) count += half_box<D, T, Counting>(f, boxes[k], mine.data());
    // Merge: each particle sums the thread buffers in thread order (deterministic for a
    // given thread count).
#pragma omp for schedule(static)
    for (long i = 0; i < static_cast<long>(n); ++i) {
      Acc4<T> a{0, 0, 0, 0};
      for (int t = 0; t < threads; ++t) {
        const Acc4<T>& p = buffers[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)];
        a.x += p.x;
        a.y += p.y;
        a.z += p.z;
      }
      f.acc[i] = a;
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
void cpu_omp_n3(const HostNearField<T>& f, std::vector<std::vector<Acc4<T>>>& buffers) {
  f.counter ? omp_n3<D, T, true>(f, buffers) : omp_n3<D, T, false>(f, buffers);
}

#define NF_INSTANTIATE(D, T)                                                            \
  template void cpu_serial<D, T>(const HostNearField<T>&);                              \
  template void cpu_n3<D, T>(const HostNearField<T>&);                                  \
  template void cpu_omp<D, T>(const HostNearField<T>&);                                 \
  template void cpu_omp_n3<D, T>(const HostNearField<T>&, std::vector<std::vector<Acc4<T>>>&);
NF_INSTANTIATE(2, float)
NF_INSTANTIATE(3, float)
NF_INSTANTIATE(2, double)
NF_INSTANTIATE(3, double)
#undef NF_INSTANTIATE

}  // namespace nf
