#pragma once
//! The box rule of docs/design.md §2, shared by the tree builders (CPU and GPU) and by the
//! near-field mask of the all-pairs kernels, which applies it to positions directly.

#include <cstdint>

#include "core/hd.h"

namespace nf {

//! Deepest level of the tree: Morton keys are 64-bit, dim*K bits of them, so 2D goes to 31 and 3D
//! to 21 (one bit short of 64 in 3D); box coordinates (at most 2^31 - 1) fit 32-bit integers.
NF_HD constexpr int max_level(int dim) { return dim == 2 ? 31 : 21; }

//! Deepest level of the paper's dense layout (boxIdx and neighbor lists over all 4^K / 8^K boxes):
//! its box ids and neighbor-link offsets are 32-bit, and B = (3n-2)^d - n^d links (n = 2^K) stay
//! under 2^32 up to level 14 in 2D and 9 in 3D.
NF_HD constexpr int max_dense_level(int dim) { return dim == 2 ? 14 : 9; }

//! Box coordinate along one axis: floor((x - x0) / side * 2^K), computed in float64 and clamped
//! to [0, 2^K - 1] so that the domain's upper face belongs to the last box. Host and device
//! evaluate the same IEEE operations (subtract, divide, multiply by a power of two), so both
//! give the same box, bit for bit. Valid for 0 <= level <= 31.
NF_HD inline std::uint32_t box_coordinate(double x, double x0, double side, int level) {
  const std::uint32_t n = 1u << level;
  const double scaled = (x - x0) / side * static_cast<double>(n);
  if (!(scaled > 0.0)) return 0;  // also maps -0 and (impossible for checked input) NaN to 0
  if (scaled >= static_cast<double>(n)) return n - 1;
  return static_cast<std::uint32_t>(scaled);  // truncation is floor for positive values
}

}  // namespace nf
