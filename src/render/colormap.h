#pragma once
//! The fixed colour map of density pictures: black background (no mass), then dark violet ->
//! purple -> red -> orange -> pale yellow as the log surface density rises. Luminance grows
//! monotonically, so the picture also reads in grey; the lowest density is clearly not black.

#include <array>
#include <cstdint>

namespace nf::render {

//! 8-bit RGB.
using Rgb = std::array<std::uint8_t, 3>;

//! Pixels without mass.
constexpr Rgb kBackground = {0, 0, 0};

//! Control points at t = 0, 1/4, 1/2, 3/4, 1; colours in between are linear in t.
constexpr std::array<Rgb, 5> kColourStops = {
    {{48, 16, 112}, {128, 32, 150}, {220, 60, 70}, {250, 165, 40}, {255, 250, 215}}};

//! The colour of t in [0, 1] (clamped): 0 = lowest density shown, 1 = highest.
inline Rgb colour_of(double t) {
  t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
  const double s = t * (kColourStops.size() - 1);
  std::size_t k = static_cast<std::size_t>(s);
  if (k >= kColourStops.size() - 1) k = kColourStops.size() - 2;
  const double f = s - static_cast<double>(k);
  Rgb c{};
  for (int i = 0; i < 3; ++i)
    c[i] = static_cast<std::uint8_t>(kColourStops[k][i] + f * (kColourStops[k + 1][i] - kColourStops[k][i]) + 0.5);
  return c;
}

}  // namespace nf::render
