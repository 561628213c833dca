#include "render/density_image.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "core/numbers.h"
#include "render/colormap.h"

namespace nf::render {
namespace {

constexpr int kMaxPixels = 16384;  // a side; 16384^2 RGB is 768 MiB, beyond any sensible picture

// The two coordinates of `plane` for particle i.
void project(const Particles& p, Plane plane, std::size_t i, double& u, double& v) {
  u = plane == Plane::yz ? p.y[i] : p.x[i];
  v = plane == Plane::xy ? p.y[i] : p.z[i];
}

// Index of the cell of [lo, hi] divided into n cells that holds t, or -1 outside.
long cell(double t, double lo, double hi, int n) {
  if (!(t >= lo && t <= hi)) return -1;
  const long k = static_cast<long>((t - lo) / (hi - lo) * n);
  return std::min<long>(k, n - 1);
}

}  // namespace

Plane parse_plane(const std::string& text) {
  if (text == "xy") return Plane::xy;
  if (text == "xz") return Plane::xz;
  if (text == "yz") return Plane::yz;
  throw UsageError("unknown plane '" + text + "' (expected xy, xz or yz)");
}

const char* to_string(Plane p) { return p == Plane::xy ? "xy" : p == Plane::xz ? "xz" : "yz"; }

View parse_view(const std::string& text, const std::string& option) {
  std::vector<double> v;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    double x = 0.0;
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!parse_double(item, x) || !std::isfinite(x))
      throw UsageError(option + ": '" + item + "' is not a finite number");
    v.push_back(x);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.size() != 4 || !(v[1] > v[0]) || !(v[3] > v[2]))
    throw UsageError(option + " takes U0,U1,V0,V1 with U0 < U1 and V0 < V1, not '" + text + "'");
  return {v[0], v[1], v[2], v[3]};
}

View default_view(const Particles& p, Plane plane) {
  if (p.size() == 0) return {-1.0, 1.0, -1.0, 1.0};
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double hi[2] = {-lo[0], -lo[1]};
  for (std::size_t i = 0; i < p.size(); ++i) {
    double c[2];
    project(p, plane, i, c[0], c[1]);
    for (int a = 0; a < 2; ++a) lo[a] = std::min(lo[a], c[a]), hi[a] = std::max(hi[a], c[a]);
  }
  const double centre[2] = {lo[0] + 0.5 * (hi[0] - lo[0]), lo[1] + 0.5 * (hi[1] - lo[1])};
  double half = 0.55 * std::max(hi[0] - lo[0], hi[1] - lo[1]);
  View v{centre[0] - half, centre[0] + half, centre[1] - half, centre[1] + half};
  // Zero extent, or one too small to tell the edges apart in double: a square of side 2.
  if (!(half > 0.0 && v.u1 > v.u0 && v.v1 > v.v0 && v.u0 <= lo[0] && v.u1 >= hi[0] && v.v0 <= lo[1] &&
        v.v1 >= hi[1])) {
    half = std::max(1.0, 1e-9 * std::max(std::abs(centre[0]), std::abs(centre[1])));
    v = {centre[0] - half, centre[0] + half, centre[1] - half, centre[1] + half};
  }
  return v;
}

Rendering render_density(const Particles& p, const RenderOptions& opt) {
  if (p.dim == 2 && opt.plane != Plane::xy)
    throw UsageError(std::string("2D particles have no z: plane ") + to_string(opt.plane) + " needs 3D input; use xy");
  Rendering r;
  r.view = opt.view ? *opt.view : default_view(p, opt.plane);
  const View& view = r.view;
  if (!(view.u1 > view.u0 && view.v1 > view.v0) || !std::isfinite(view.u1 - view.u0) ||
      !std::isfinite(view.v1 - view.v0))
    throw UsageError("the view must have u0 < u1 and v0 < v1 (finite)");
  const int w = opt.width;
  int h = opt.height;
  if (h == 0 && w >= 1) {  // as high as the view's aspect needs: square pixels, or a refusal
    const double tall = w * ((view.v1 - view.v0) / (view.u1 - view.u0));
    if (!(tall < kMaxPixels + 0.5))
      throw UsageError("the view is " + format_double((view.v1 - view.v0) / (view.u1 - view.u0)) +
                       " times as high as wide: " + std::to_string(w) + " pixels wide it needs " + format_double(tall) +
                       " rows, more than " + std::to_string(kMaxPixels) + "; use a smaller --size (simulate: --render-size) or a wider view");
    h = static_cast<int>(std::lround(tall));
  }
  h = h == 0 ? 1 : h;
  if (w < 1 || w > kMaxPixels || h < 1 || h > kMaxPixels)
    throw UsageError("picture size " + std::to_string(w) + " x " + std::to_string(h) + ": each side must be 1.." +
                     std::to_string(kMaxPixels) + " pixels");

  // Mass per pixel (or count per pixel when every mass is 0).
  const std::size_t npix = std::size_t(w) * h;
  std::vector<double> mass(npix, 0.0);
  r.counts = std::all_of(p.m.begin(), p.m.end(), [](double m) { return m == 0.0; }) && p.size() > 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    double u, v;
    project(p, opt.plane, i, u, v);
    const long cu = cell(u, view.u0, view.u1, w), cv = cell(v, view.v0, view.v1, h);
    if (cu < 0 || cv < 0) {
      ++r.outside;
      continue;
    }
    ++r.drawn;
    const std::size_t row = std::size_t(h - 1 - cv);  // row 0 is the top: largest v
    mass[row * w + std::size_t(cu)] += r.counts ? 1.0 : p.m[i];
  }

  const double area = (view.u1 - view.u0) / w * ((view.v1 - view.v0) / h);
  if (!(area > 0.0 && std::isfinite(area)))  // a view of 1e300 had drawn every pixel empty
    throw UsageError("a pixel of this view covers an area of " + format_double(area) +
                     ", which is not a finite positive number in double; use a smaller (or larger) view");
  double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
  for (double& m : mass) {
    m /= area;
    if (m > 0.0) lo = std::min(lo, m), hi = std::max(hi, m);
  }
  if (opt.density_range) {
    lo = opt.density_range->first;
    hi = opt.density_range->second;
    if (!(lo > 0.0 && hi >= lo && std::isfinite(hi))) throw UsageError("the density range needs 0 < lo <= hi");
  }
  r.density_lo = hi > 0.0 ? lo : 0.0;
  r.density_hi = hi;

  r.image.width = w;
  r.image.height = h;
  r.image.rgb.resize(npix * 3);
  const double log_span = hi > lo ? std::log(hi / lo) : 0.0;
  for (std::size_t k = 0; k < npix; ++k) {
    const Rgb c = mass[k] > 0.0 ? colour_of(log_span > 0.0 ? std::log(mass[k] / lo) / log_span : 1.0) : kBackground;
    std::copy(c.begin(), c.end(), r.image.rgb.begin() + static_cast<std::ptrdiff_t>(3 * k));
  }
  return r;
}

}  // namespace nf::render
