#pragma once
//! The order of a full method's expansions (docs/design.md §16): given, or chosen from a target
//! accuracy by an error model of the far field's truncation.
//!
//! The model: for each order p, the largest relative L2 error of the accelerations measured for
//! a fast multipole method over this project's tree (one box of separation, Cartesian expansions of
//! total degree p) against float64 all pairs, over every calibrated input: uniform, Plummer and
//! clustered, 10 particles per leaf box at 2D levels 4 and 6 and 3D levels 3 and 4 (cpu-fmm with
//! M2L's orders per offset, orders 1..16), and N = 2^20 at level 5 (fmm in double, orders 1..20,
//! with the orders per offset). The chosen order is the
//! smallest p whose measured worst case is at most the target. Mass piled at a box's corner
//! converges more slowly than any calibrated input (the one-box separation's worst case,
//! (sqrt(d)/2)^p), and inputs unlike the calibrated ones may lie above the table.

#include <algorithm>
#include <cmath>

#include "farfield/multi_index.h"

namespace nf::farfield {

//! The accuracy a full method aims at when none is asked for.
inline constexpr double kDefaultAccuracy = 1e-4;

//! The error model of dimension d: the worst measured error at each order.
struct ErrorModel {
  const double* worst;  //!< [kMaxOrder]: order p at index p - 1
  double error(int p) const { return worst[std::clamp(p, 1, kMaxOrder) - 1]; }
};

//! The tables come from scripts/fmm-order.sh (results/fmm-order/ and the double rows of
//! results/fmm-accuracy/; how it fills orders a source did not run is written there), rounded up to
//! 3 digits and non-increasing in p. They replace a fit err(p) = c rho^p (3D c = 0.0117, rho =
//! 0.623) that bounded the orders 4..12 it was fitted on but not the others: the CPU measured up to
//! 9.7x its value at p = 1 and 1.34x at p = 16 in 3D, and the GPU at N = 2^20 1.6x at p = 4 (3D
//! Plummer). At the default 1e-4 the table picks p = 8 in 2D and 10 in 3D (the fit: 9 and 11);
//! at 1e-3 in 3D, p = 6: 3D Plummer at N = 2^20 measured 1.13e-3 at p = 5 (3D uniform 2^24 at
//! level 6, 3.6e-4 on a sample). The odd orders, measured on the GPU since the table was first made
//! (they had been interpolated), raised 2D p = 5 from 7.2e-4 to 1.2e-3 and p = 7 from 1.4e-4 to 2.4e-4.
inline ErrorModel error_model(int dim) {
  static constexpr double k2[kMaxOrder] = {0.0657, 0.0144, 0.00774, 0.00169, 0.0012, 0.000306, 0.000243,
                                           6.28e-05, 4.46e-05, 3.42e-05, 2.99e-05, 5.89e-06, 3.78e-06, 3.78e-06,
                                           3.44e-06, 7.09e-07, 3.76e-07, 2.8e-07, 2.8e-07, 7.21e-08};
  static constexpr double k3[kMaxOrder] = {0.111, 0.0275, 0.00817, 0.00286, 0.00114, 0.00052, 0.000295,
                                           0.000183, 0.000113, 8.34e-05, 5.47e-05, 3.43e-05, 2.32e-05, 1.66e-05,
                                           1.19e-05, 8.1e-06, 5.65e-06, 3.94e-06, 2.75e-06, 1.92e-06};
  return ErrorModel{dim == 2 ? k2 : k3};
}

//! How much more than the table a leaf level `level` errs: the error grows with the levels of M2L
//! (each adds its own truncation error), and the table was measured at 2D levels 4..6 and 3D levels
//! 3..5. In 2D the growth is measured (cpu-fmm in double, validate --sample 1000-2000, 2D clusters,
//! the worst input there): at N = 10^6 the error over the table's at p = 8 / 10 / 12 was 1.75 /
//! 1.10 / 1.55 at level 6, 2.67 / 1.93 / 2.56 at 7, 3.4 / 2.8 / 3.3 at 8, 3.9 / 3.5 / 3.7 at 9,
//! 4.4 / 4.2 / 4.2 at 10 and 4.9 / 5.0 / 5.1 at 11 (N = 10^5: 1.39 / 2.15 / 2.79 / 3.56 at p = 8,
//! levels 6..9), about linear in the levels past 5: 1 + 0.8 (level - 5), which bounds every one of
//! them. In 3D the levels --level auto picks had stayed within the table (3D clusters N = 10^6 at
//! level 7, 1.01x at p = 10; uniform 2^24 at level 6, 0.74x), so 1 there up to level 7 and the same
//! growth past it (a bound borrowed from 2D: fmm in double on 3D Plummer and clusters of 2^22
//! measured the same ratio at levels 7, 8 and 9, 1.15 / 1.16 / 1.16 at p = 10 on Plummer,
//! results/fmm-depth-error; sparse levels grow instead: sparse_factor below). An order chosen for the accuracy at a level therefore
//! grows with the level (1e-4: in 2D p = 8 to level 5, 9 at 6, 10 at 7, 12 from 8; in 3D 10 to
//! level 7, then 11, 12, 13 ...).
inline double depth_factor(int dim, int level) {
  const int from = dim == 2 ? 5 : 7;
  return level > from ? 1.0 + 0.8 * double(level - from) : 1.0;
}

//! How much more than the table a sparse tree errs in 3D: N particles over a leaf level with far
//! more boxes than a calibrated input's err more, the fewer particles there are and the more boxes
//! they spread over. Measured on 3D uniform inputs, the worst calibrated one (cpu-fmm in double
//! against float64 all pairs, N = 100 to 131072, orders 8 to 12: scripts/fmm-sparse.sh; fmm at
//! 2^20, levels 7 and 8: scripts/fmm-bench.sh sparse, H200; results/fmm-sparse/) against x = N^2 /
//! 8^level (N times the particles a box): from x = 1e5 up the error stays below the table (0.41x
//! to 0.86x; 0.99x at 9.8e4; 2^20 at level 8, x = 65536: 0.89x), and below it grows about as x^-0.25 over four decades: 1.5x at x = 8192 (N = 2048,
//! level 3), 2.2x at 1526 (N = 20000, level 6), 3.6x at 128 (N = 2048, level 5), 8.1x at 19.5
//! (N = 100, level 3). An order chosen from the table alone had erred 1.8e-4 at --accuracy 1e-4
//! (N = 2048, level 4, p = 10). The factor (kSparseScale / x)^kSparseSlope is the power law that
//! bounds every measured ratio with the least overshoot (at most 2.2x, at N = 100 level 2;
//! scripts/fit_error_model.py fits both, the check error_model holds these to them). x counts the
//! level's boxes, not the non-empty ones, so a clustered input, whose particles crowd fewer boxes, is
//! held to more than it needs (3D Plummer of 20000 at level 6 erred 0.87x the table where the factor
//! is 2.7); the factor is never below 1, and 2D, whose rows stayed within the table at the same N
//! and boxes where its depth factor is 1 (0.47x at most; 0.90x at level 6, where the depth factor
//! is 1.8), takes none.
//! Below the least x measured, kSparseLeastX (N = 100 at level 3), x is taken as that: a pair's
//! truncation error has a worst case (the one-box separation's), so the ratio cannot grow without
//! bound, and a power law carried past its data had refused --accuracy 1e-4 for one particle at
//! level 3 (factor 80) and held an explicit order 2 to a tolerance of 8.9 (N = 100, level 8).
inline constexpr double kSparseSlope = 0.25;
inline constexpr double kSparseScale = 82000;
inline constexpr double kSparseLeastX = 19;

inline double sparse_factor(int dim, double particles, int level) {
  if (dim != 3 || level < 2 || !(particles > 0)) return 1.0;
  const double x = std::max(kSparseLeastX, particles * particles / std::ldexp(1.0, 3 * level));
  return x >= kSparseScale ? 1.0 : std::pow(kSparseScale / x, kSparseSlope);
}

//! The model's factor over the table for `particles` (0: not known, no sparse factor) at leaf
//! level `level`: the larger of the depth and sparse factors, each a bound measured on its own.
inline double error_factor(int dim, int level, double particles) {
  return std::max(depth_factor(dim, level), sparse_factor(dim, particles, level));
}

//! How much more than the table an adaptive method (methods/adaptive_method.h) errs in 3D: the
//! largest measured error of fmm-adaptive over the table's at its order, over every order (6 to 16)
//! and input measured (H200, scripts/fmm-bench.sh depth-error, results/fmm-depth-error/; uniform,
//! Plummer, clusters, corners, shell, mixed and galaxies of 2^22, a lattice of 2^21, Plummer,
//! corners and the shell at 2^24; leaf sizes 16 to 285, trees 5 to 12 levels deep; fit by
//! scripts/fit_error_model.py, which the check error_model holds this value to). One margin for
//! every order and depth: the ratio follows the input more than the depth or the order. Most
//! inputs stay within 1.16x the table at any depth (corners and galaxies at level 12 within 0.77x
//! and 1.45x); a thin shell errs most and grows with its depth and N (2^22 at p = 11: 1.32x at level
//! 7, 1.84x at 10; 2^24 at level 8, 1.93x), and its largest ratio, 2.44 at p = 6 on level 10 (2.45 rounded up), is
//! the margin. At 1e-4 that takes p = 12, at any depth (the 3D depth factor below had taken up to
//! 14 at level 12, where galaxies, corners and mixed erred 0.6-0.9x the table at p = 12).
inline constexpr double kAdaptiveMargin3 = 2.45;

//! The smallest order p in 1..kMaxOrder whose modeled error on an adaptive tree in 3D (the table
//! times kAdaptiveMargin3) is at most `accuracy` (kMaxOrder when none is).
inline int adaptive_order_for_accuracy_3d(double accuracy) {
  const ErrorModel m = error_model(3);
  for (int p = 1; p <= kMaxOrder; ++p)
    if (m.error(p) * kAdaptiveMargin3 <= accuracy) return p;
  return kMaxOrder;
}

//! The order an adaptive method (methods/adaptive_method.h) takes for `accuracy` without --order:
//! in 3D adaptive_order_for_accuracy_3d at any depth; in 2D the table's order for half the
//! accuracy at the calibration depth (`base`, which sets the automatic leaf size) or, where the
//! deepest level is known (level >= 0) and needs more, the order that level needs for the accuracy
//! itself (depth_factor: 2D mixed inputs at level 12 had erred 1.3e-4 to 1.7e-4 at p = 9).
//! Defined after order_for_accuracy below.
inline int adaptive_order(int dim, double accuracy, int level, int* base = nullptr);

//! The adaptive methods' modeled best in 3D (order kMaxOrder): an accuracy below it cannot be reached.
inline double best_adaptive_error_3d() { return error_model(3).error(kMaxOrder) * kAdaptiveMargin3; }

//! The smallest order p in 1..kMaxOrder whose modeled error at leaf level `level` for `particles`
//! (the table times error_factor) is at most `accuracy` (kMaxOrder when none is).
inline int order_for_accuracy(int dim, double accuracy, int level, double particles) {
  const ErrorModel m = error_model(dim);
  const double factor = error_factor(dim, level, particles);
  for (int p = 1; p <= kMaxOrder; ++p)
    if (m.error(p) * factor <= accuracy) return p;
  return kMaxOrder;
}

inline int adaptive_order(int dim, double accuracy, int level, int* base) {
  if (dim == 3) {
    const int p = adaptive_order_for_accuracy_3d(accuracy);
    if (base) *base = p;
    return p;
  }
  const int half = order_for_accuracy(dim, accuracy / 2, 0, 0);
  if (base) *base = half;
  return level >= 0 ? std::max(half, order_for_accuracy(dim, accuracy, level, 0)) : half;
}

//! The error model's best (order kMaxOrder) at leaf level `level` for `particles`: an accuracy
//! below it cannot be reached there.
inline double best_modelled_error(int dim, int level, double particles) {
  return error_model(dim).error(kMaxOrder) * error_factor(dim, level, particles);
}

//! The deepest level in 0..deepest where order kMaxOrder reaches `accuracy` for `particles` (the
//! factors grow with the level), or -1 where none does.
inline int deepest_reaching(int dim, double accuracy, int deepest, double particles) {
  int level = -1;
  while (level < deepest && best_modelled_error(dim, level + 1, particles) <= accuracy) ++level;
  return level;
}

//! A full method's setup as it runs: `order` given (> 0) stays, with the accuracy as asked (0:
//! none, validate then holds the method to the model's error at that order); else the order comes
//! from the accuracy (0: kDefaultAccuracy), which is recorded, so that validate holds the method to
//! the target it was asked to reach, not to the model's error at the order it chose.
//! The order comes with the leaf level `level` and the particles (order_for_accuracy); where the
//! level is still to be chosen (negative: --level auto) it stays 0 and the level rule picks the
//! order with each level.
inline void resolve(int dim, int level, double particles, int& order, double& accuracy) {
  if (order > 0) return;
  if (accuracy <= 0) accuracy = kDefaultAccuracy;
  order = level >= 0 ? order_for_accuracy(dim, accuracy, level, particles) : 0;
}

}  // namespace nf::farfield
