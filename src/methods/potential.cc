#include "methods/potential.h"

#include <numeric>
#include <vector>

#include "core/bodies.h"
#include "physics/interaction.h"
#include "tree/tree.h"

namespace nf {
namespace {

template <int D>
double allpairs(const Particles& p, double softening) {
  const SoftenedGravity<D, double> g{softening * softening};
  const long n = static_cast<long>(p.size());
  const std::vector<Body<double>> b = make_bodies<double>(p);
  std::vector<double> row(p.size(), 0.0);  // row[i] = sum_{j>i} m_j / r_ij
#pragma omp parallel for schedule(dynamic, 16)
  for (long i = 0; i < n; ++i) {
    const Body<double> bi = b[i];
    double s = 0.0;
    for (long j = i + 1; j < n; ++j) s += p.m[j] * g.inverse_distance(bi, b[j]);
    row[i] = p.m[i] * s;
  }
  return -std::accumulate(row.begin(), row.end(), 0.0);
}

template <int D>
double near_field(const Particles& p, int level, const Domain& domain, double softening) {
  const SoftenedGravity<D, double> g{softening * softening};
  const Tree t = build_tree(p, level, domain, false);
  const long boxes = static_cast<long>(t.nonempty_boxes());
  const std::vector<Body<double>> b = make_bodies<double>(p, t.order.data());
  std::vector<double> per_box(t.nonempty_boxes(), 0.0);
  // Each unordered pair once: later particles of the own box, then every particle of the
  // neighbors with a larger compact id (the half lists).
#pragma omp parallel for schedule(dynamic, 4)
  for (long k = 0; k < boxes; ++k) {
    double sum = 0.0;
    for (std::uint32_t i = t.box_first[k]; i < t.box_first[k + 1]; ++i) {
      double s = 0.0;
      for (std::uint32_t j = i + 1; j < t.box_first[k + 1]; ++j) s += b[j].m * g.inverse_distance(b[i], b[j]);
      for (std::uint32_t l = t.near_half.offset[k]; l < t.near_half.offset[k + 1]; ++l) {
        const std::uint32_t nb = t.near_half.ids[l];
        for (std::uint32_t j = t.box_first[nb]; j < t.box_first[nb + 1]; ++j) s += b[j].m * g.inverse_distance(b[i], b[j]);
      }
      sum += b[i].m * s;
    }
    per_box[k] = sum;
  }
  return -std::accumulate(per_box.begin(), per_box.end(), 0.0);
}

}  // namespace

double allpairs_potential(const Particles& p, double softening) {
  return p.dim == 2 ? allpairs<2>(p, softening) : allpairs<3>(p, softening);
}

double near_field_potential(const Particles& p, int level, const Domain& domain, double softening) {
  return p.dim == 2 ? near_field<2>(p, level, domain, softening) : near_field<3>(p, level, domain, softening);
}

}  // namespace nf
