#pragma once
//! The square (2D) or cube (3D) that level 0 covers (docs/design.md §2).

#include <string>

#include "core/particles.h"

namespace nf {

//! Lower corner and side length of the root box.
struct Domain {
  double origin[3] = {0.0, 0.0, 0.0};
  double side = 1.0;
};

//! Default domain: origin = componentwise minimum of the positions, side = largest extent over
//! the dimensions; zero extent (no particles, one particle, all coincident) gives side = 1.
Domain default_domain(const Particles& p);
//! The smallest domain side the tree takes (boxes down to level 31 stay normal float64 numbers).
inline constexpr double kSmallestSide = 1e-290;
//! InputError unless `side` is finite and at least kSmallestSide (`what` names its source).
void check_side(double side, const std::string& what);

//! Parses "x0,y0[,z0],side" (dim + 1 numbers, side > 0, all finite); throws InputError.
Domain parse_domain(const std::string& text, int dim);

//! Throws InputError naming `source`, the 1-based particle row and the coordinate when a particle
//! lies outside the closed domain [origin, origin + side]^dim.
void check_inside(const Particles& p, const Domain& d, const std::string& source);

//! The explicit domain if `text` is non-empty (checked against the particles), else the default.
Domain resolve_domain(const Particles& p, const std::string& text, const std::string& source);

//! "x0,y0[,z0],side" with shortest round-trip formatting.
std::string format_domain(const Domain& d, int dim);

}  // namespace nf
