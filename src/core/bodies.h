#pragma once
//! Particles -> bodies on the host: the one place where float64 particle arrays become the packed
//! Body<T> records the kernels read, and kernels' Acc4<T> results become rows of float64 again
//! (core/device_bodies.h is the device twin).

#include <cstdint>
#include <vector>

#include "core/body.h"
#include "core/particles.h"

namespace nf {

//! bodies[s] = particle order[s] (order null: particle s), positions and mass rounded to T,
//! z = 0 in 2D.
template <class T>
std::vector<Body<T>> make_bodies(const Particles& p, const std::uint32_t* order = nullptr) {
  std::vector<Body<T>> b(p.size());
  for (std::size_t s = 0; s < b.size(); ++s) {
    const std::size_t i = order ? order[s] : s;
    b[s] = {T(p.x[i]), T(p.y[i]), p.dim == 3 ? T(p.z[i]) : T(0), T(p.m[i])};
  }
  return b;
}

//! Input-order bodies as a kernel of precision `seen` sees them, widened back to float64 (exact):
//! what the float64 references compute on, so that validation measures a kernel's arithmetic and
//! not the rounding of its inputs.
inline std::vector<Body<double>> bodies_as_seen(const Particles& p, Precision seen) {
  if (seen == Precision::f64) return make_bodies<double>(p);
  const std::vector<Body<float>> f = make_bodies<float>(p);
  std::vector<Body<double>> b(f.size());
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = {f[i].x, f[i].y, f[i].z, f[i].m};
  return b;
}

//! Accelerations as rows of D float64s: row order[s] (order null: row s) takes a[s]'s x, y (and z
//! in 3D); how a method's sorted or input-order results become its accelerations().
template <int D, class T>
std::vector<double> acceleration_rows(const std::vector<Acc4<T>>& a, const std::uint32_t* order = nullptr) {
  std::vector<double> out(a.size() * D);
  for (std::size_t s = 0; s < a.size(); ++s) {
    double* o = &out[(order ? std::size_t(order[s]) : s) * D];
    o[0] = double(a[s].x);
    o[1] = double(a[s].y);
    if constexpr (D == 3) o[2] = double(a[s].z);
  }
  return out;
}

}  // namespace nf
