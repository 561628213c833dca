#include "allpairs/allpairs_cpu.h"

#include <omp.h>

#include <algorithm>

#include "physics/interaction.h"

namespace nf {
namespace {

// Target i's sum over every source (or, with cells, the near ones) in index order: the one sum
// behind the whole reference and its sampled form, so a sampled target gets the same bits.
template <int D>
inline void add_target(const SoftenedGravity<D, double>& g, const std::vector<Body<double>>& b,
                       const std::vector<Cell>* cells, long i, double* out) {
  const long n = static_cast<long>(b.size());
  Acc4<double> a{0, 0, 0, 0};
  for (long j = 0; j < n; ++j) {
    if (j == i) continue;
    if (cells && !near_cells<D>((*cells)[i], (*cells)[j])) continue;
    g(b[i], b[j], a);
  }
  out[0] += a.x;
  out[1] += a.y;
  if constexpr (D == 3) out[2] += a.z;
}

// Targets [begin, end) (each target's sum is the same whatever the blocks).
template <int D>
void run(const std::vector<Body<double>>& b, const std::vector<Cell>* cells, double softening, long begin, long end,
         double* out) {
  const SoftenedGravity<D, double> g{softening * softening};
#pragma omp parallel for schedule(dynamic, 64)
  for (long i = begin; i < end; ++i) add_target<D>(g, b, cells, i, out + i * D);
}

// Every target, in blocks when someone watches the progress: a block is 1% of the targets or 10^9
// pairs (seconds), whichever is less, but at least 512 targets per thread (eight chunks of 64 each).
template <int D>
void run(const std::vector<Body<double>>& b, const std::vector<Cell>* cells, double softening, double* out,
         const std::function<void(double)>& progress) {
  const long n = static_cast<long>(b.size());
  if (!progress) return run<D>(b, cells, softening, 0, n, out);
  const long block = std::max(512L * omp_get_max_threads(), std::min(n / 100, static_cast<long>(1e9 / double(n))));
  for (long begin = 0; begin < n; begin += block) {
    const long end = std::min(n, begin + block);
    run<D>(b, cells, softening, begin, end, out);
    progress(static_cast<double>(end) / static_cast<double>(n));
  }
}

template <int D>
void run_targets(const std::vector<Body<double>>& b, const std::vector<Cell>* cells, double softening,
                 const std::vector<std::size_t>& targets, double* out) {
  const SoftenedGravity<D, double> g{softening * softening};
  const long m = static_cast<long>(targets.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (long t = 0; t < m; ++t) add_target<D>(g, b, cells, static_cast<long>(targets[t]), out + t * D);
}

template <int D>
void run_sources(const std::vector<Body<double>>& t, const std::vector<Body<double>>& src, double softening,
                 double* out) {
  const SoftenedGravity<D, double> g{softening * softening};
  const long n = static_cast<long>(t.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (long i = 0; i < n; ++i) {
    Acc4<double> a{0, 0, 0, 0};
    for (const Body<double>& s : src) g(t[i], s, a);
    out[i * D] += a.x;
    out[i * D + 1] += a.y;
    if constexpr (D == 3) out[i * D + 2] += a.z;
  }
}

}  // namespace

void cpu_allpairs_sources(int dim, const std::vector<Body<double>>& targets, const std::vector<Body<double>>& sources,
                          double softening, double* acc) {
  if (dim == 2)
    run_sources<2>(targets, sources, softening, acc);
  else
    run_sources<3>(targets, sources, softening, acc);
}

void cpu_allpairs(int dim, const std::vector<Body<double>>& bodies, const std::vector<Cell>* cells, double softening,
                  double* acc, const std::function<void(double)>& progress) {
  if (dim == 2)
    run<2>(bodies, cells, softening, acc, progress);
  else
    run<3>(bodies, cells, softening, acc, progress);
}

void cpu_allpairs_targets(int dim, const std::vector<Body<double>>& bodies, const std::vector<Cell>* cells,
                          double softening, const std::vector<std::size_t>& targets, double* acc) {
  if (dim == 2)
    run_targets<2>(bodies, cells, softening, targets, acc);
  else
    run_targets<3>(bodies, cells, softening, targets, acc);
}

}  // namespace nf
