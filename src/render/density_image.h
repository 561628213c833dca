#pragma once
//! Surface density pictures of particles (docs/design.md §14): mass per pixel of a projection,
//! log-scaled through the fixed colour map of colormap.h. Used by `nearfield render` and by
//! simulations writing frames.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/particles.h"

namespace nf::render {

//! The projection plane: which two coordinates become the picture's horizontal and vertical axes.
enum class Plane { xy, xz, yz };

//! Parses "xy", "xz" or "yz"; throws UsageError otherwise.
Plane parse_plane(const std::string& text);
//! "xy", "xz" or "yz".
const char* to_string(Plane p);

//! The rectangle of the plane shown: horizontal [u0, u1], vertical [v0, v1] (u1 > u0, v1 > v0).
struct View {
  double u0 = 0.0, u1 = 1.0, v0 = 0.0, v1 = 1.0;
};

//! An 8-bit RGB picture, rows from top to bottom, 3 bytes per pixel.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
  //! The colour of pixel (column, row), row 0 at the top.
  const std::uint8_t* pixel(int column, int row) const { return rgb.data() + 3 * (std::size_t(row) * width + column); }
};

//! What to draw.
struct RenderOptions {
  int width = 800;  //!< pixels
  int height = 0;   //!< pixels; 0 = keep the view's aspect ratio (square for the default view)
  Plane plane = Plane::xy;
  //! The part of the plane shown; default: a square around all particles with a 5% margin (a
  //! simulation passes a fixed view so that frames line up).
  std::optional<View> view;
  //! Surface densities mapped to the two ends of the colour map (log scale between them; lower
  //! non-zero values get the lowest colour, higher ones the highest); default: the smallest and
  //! largest non-zero pixel of this picture. Frames of a simulation pass a fixed range.
  std::optional<std::pair<double, double>> density_range;
};

//! Parses "U0,U1,V0,V1" (finite, U0 < U1, V0 < V1); UsageError naming `option` otherwise.
View parse_view(const std::string& text, const std::string& option);

//! The picture and what it shows.
struct Rendering {
  Image image;
  View view;                         //!< the view used
  double density_lo = 0.0, density_hi = 0.0;  //!< surface densities at the ends of the colour map
  std::size_t drawn = 0;             //!< particles inside the view
  std::size_t outside = 0;           //!< particles outside the view (not drawn)
  bool counts = false;               //!< every mass was 0: the picture shows particle counts
};

//! The default view of `p` in `plane`: the square centred on the particles' bounding box with
//! side 1.1 x its larger extent; a square of side 2 around the point when the extent is zero (one
//! particle, all coincident) and around the origin for no particles.
View default_view(const Particles& p, Plane plane);

//! Renders p: each particle's mass goes to the pixel containing its projected position (a
//! pixel's lower edges belong to it, the view's upper edges to the last pixel); pixel value =
//! mass / pixel area; pixels without mass are kBackground, the others colour_of(t) with
//! t = log(density / lo) / log(hi / lo) (t = 1 when hi = lo). Throws UsageError for a plane that
//! needs z on 2D particles, a bad size (1..16384 pixels a side) or an empty view.
Rendering render_density(const Particles& p, const RenderOptions& opt);

}  // namespace nf::render
