#pragma once
//! Random draws shared by the generators (generate.cc, galaxies.cc).

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "core/random.h"

namespace nf {

//! Isotropic unit vector (uniform cos(theta), then phi).
inline Eigen::Vector3d isotropic_direction(Random& r) {
  const double cz = r.uniform(-1.0, 1.0), phi = 6.283185307179586 * r.uniform();
  const double s = std::sqrt(std::max(0.0, 1.0 - cz * cz));
  return {s * std::cos(phi), s * std::sin(phi), cz};
}

//! Radius of a Plummer sphere of scale radius a (inverse of the enclosed-mass fraction), drawn
//! again beyond 10 a so that rare far outliers do not stretch the domain.
inline double plummer_radius(Random& r, double a) {
  double radius;
  do {
    double x1;
    do x1 = r.uniform();
    while (x1 <= 0.0);
    radius = a / std::sqrt(std::pow(x1, -2.0 / 3.0) - 1.0);
  } while (!(radius <= 10.0 * a));
  return radius;
}

}  // namespace nf
