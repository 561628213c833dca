#include "tree/domain.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/errors.h"
#include "core/numbers.h"

namespace nf {

Domain default_domain(const Particles& p) {
  Domain d;
  if (p.size() == 0) return d;
  double extent = 0.0;
  for (int a = 0; a < p.dim; ++a) {
    const std::vector<double>& c = a == 0 ? p.x : a == 1 ? p.y : p.z;
    double lo = c[0], hi = lo;
    const long n = static_cast<long>(c.size());
    // Parallel: min and max are exact, so the result does not depend on the thread count.
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
    for (long i = 1; i < n; ++i) {
      lo = std::min(lo, c[i]);
      hi = std::max(hi, c[i]);
    }
    d.origin[a] = lo;
    extent = std::max(extent, hi - lo);
  }
  d.side = extent > 0.0 ? extent : 1.0;
  check_side(d.side, "the particles' positions");
  return d;
}

void check_side(double side, const std::string& what) {
  // Past float64's range every box coordinate is NaN; below 1e-290 the boxes of deep levels fall
  // under its normal numbers (the review's positions 1e-323 apart had stopped M2L with an internal
  // error, and +-1e308 given NaN for every particle).
  if (!std::isfinite(side))
    throw InputError(what + " span more than float64 can hold (" + format_double(side) +
                     "): the tree's boxes need a finite side");
  if (side < kSmallestSide)
    throw InputError(what + " span " + format_double(side) + ", below " + format_double(kSmallestSide) +
                     ": the tree's boxes would fall under float64's normal numbers; scale the coordinates");
}

Domain parse_domain(const std::string& text, int dim) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) parts.push_back(item);
  if (static_cast<int>(parts.size()) != dim + 1)
    throw InputError("--domain '" + text + "': expected " + std::to_string(dim + 1) + " comma-separated numbers (" +
                     (dim == 2 ? "x0,y0,side" : "x0,y0,z0,side") + ")");
  Domain d;
  for (int a = 0; a <= dim; ++a) {
    double v = 0.0;
    if (!parse_double(parts[a], v) || !std::isfinite(v))
      throw InputError("--domain '" + text + "': '" + parts[a] + "' is not a finite number");
    if (a < dim)
      d.origin[a] = v;
    else
      d.side = v;
  }
  if (!(d.side > 0.0)) throw InputError("--domain '" + text + "': side must be positive");
  check_side(d.side, "--domain '" + text + "': the side");
  return d;
}

void check_inside(const Particles& p, const Domain& d, const std::string& source) {
  static const char* names[3] = {"x", "y", "z"};
  for (std::size_t i = 0; i < p.size(); ++i)
    for (int a = 0; a < p.dim; ++a) {
      const double v = p.coord(i, a);
      if (v < d.origin[a] || v > d.origin[a] + d.side)
        throw InputError(source, 0,
                         "particle " + std::to_string(i) + " (row " + std::to_string(i + 1) + "): " + names[a] +
                             " = " + format_double(v) + " lies outside the domain [" + format_double(d.origin[a]) +
                             ", " + format_double(d.origin[a] + d.side) + "]");
    }
}

Domain resolve_domain(const Particles& p, const std::string& text, const std::string& source) {
  if (text.empty()) return default_domain(p);
  Domain d = parse_domain(text, p.dim);
  check_inside(p, d, source);
  return d;
}

std::string format_domain(const Domain& d, int dim) {
  std::string s;
  for (int a = 0; a < dim; ++a) s += format_double(d.origin[a]) + ",";
  return s + format_double(d.side);
}

}  // namespace nf
