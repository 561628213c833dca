#pragma once
//! `--level auto` for the full methods (docs/design.md §16): the leaf level K whose modeled time of
//! one evaluation, near field against far field, is least:
//!
//!   cost(K) = pairs(K) / near_rate
//!           + [P2M + L2P (N, p) + M2M + L2L (boxes of levels 3..K, p)] / pass_rate
//!           + sum over l = 2..K of translations(l) C(p+2D, 2D) / m2l_rate,
//!
//! pairs(K) as in tree/level_rule.h (the directed pairs a box-wise near-field kernel evaluates),
//! translations(l) the M2L list entries of level l counted from its keys (farfield/lists.h:
//! count_translations), the multiply-adds of farfield/op_counts.h, p the order the method runs at
//! (farfield::resolve: --order, or from --accuracy). A deeper level trades near-field pairs for
//! far-field work; a higher order makes every translation dearer, so the choice moves shallower as p
//! grows. Ties go to the shallower level. Levels are evaluated from 0 down; the far field only grows
//! with K and pairs(K) >= N, so the search stops at the first level where N / near_rate + far(K)
//! reaches the best cost found.

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/particles.h"
#include "farfield/m2l_thread_orders.h"
#include "tree/level_rule.h"

namespace nf {

//! The rates the full-method rule divides by.
struct FullMethodRates {
  double near_pairs_per_s = 0;  //!< directed near-field pairs per second of the near kernel
  double m2l_madds_per_s = 0;   //!< M2L multiply-adds per second (CPU)
  double pass_madds_per_s = 0;  //!< P2M, M2M, L2L and L2P multiply-adds per second
  double m2l_s_per_translation = 0;  //!< M2L's cost of one translation beyond its multiply-adds (CPU)
  //! GPU: M2L costs by the sibling-group kernel's computed slots (farfield::count_group_slots),
  //! each m2l_slot_s(C(p+2d, 2d)) seconds; orders p whose bit is set in m2l_wide_orders[d - 2]
  //! take 64 targets a block, the others 32 (farfield/m2l_gpu.h: two targets a lane where the
  //! occupancy query finds they keep as many blocks on an SM as one; the masks are what that query
  //! gives on the H100, reproduced from the kernel's shared memory and registers: 3D float p <= 6
  //! and 8..11 (8 and 11 since the balanced warp plan, NEARFIELD_M2L_VERBOSE=1 on the H100), 2D float
  //! p <= 15 and 18..20; 3D double p <= 4 and 7..9, 2D double p <= 10 and 14..20).
  bool m2l_by_slots = false;
  std::array<std::uint32_t, 2> m2l_wide_orders{};
  bool m2l_wide(int dim, int order) const {
    return order >= 0 && order < 32 && (m2l_wide_orders[dim == 2 ? 0 : 1] >> order & 1u);
  }
  //! Seconds per computed slot against the multiply-adds of one translation: linear between these
  //! points, and beyond them along the first and the last segment.
  std::array<double, 8> m2l_curve_madds{}, m2l_curve_s{};
  //! The adaptive methods' own near field (leaves against their neighbours, farfield/
  //! adaptive_near_gpu.cu on the GPU), directed pairs per second: the automatic leaf size's rate.
  double adaptive_near_pairs_per_s = 0;
  //! GPU: orders up to m2l_thread_max[d - 2] run M2L a thread per target (farfield/m2l_thread_gpu.h,
  //! 0: none), whose time follows the translations: m2l_thread_s[d - 2] seconds a translation against
  //! its multiply-adds m2l_thread_madds[d - 2], linear between the points.
  std::array<int, 2> m2l_thread_max{};
  std::array<std::array<double, 7>, 2> m2l_thread_madds{}, m2l_thread_s{};
  bool m2l_threaded(int dim, int order) const { return order >= 1 && order <= m2l_thread_max[dim == 2 ? 0 : 1]; }
  //! GPU: the thread kernel's time a translation where it stages the moments (on levels whose boxes
  //! fill at least farfield::kStagedFill of their parents' places, at the orders
  //! farfield::thread_staged_order takes for scalars of m2l_scalar_bytes bytes), at the abscissas
  //! m2l_thread_madds; 0 bytes: never staged.
  int m2l_scalar_bytes = 0;
  std::array<std::array<double, 7>, 2> m2l_staged_s{};
  bool m2l_staged(int dim, int order) const {
    return m2l_scalar_bytes > 0 && m2l_threaded(dim, order) && farfield::thread_staged_order(dim, m2l_scalar_bytes, order);
  }
  //! y at x along the points (xs, ys): linear between them, beyond them along the first and the
  //! last segment.
  template <std::size_t N>
  static double along(const std::array<double, N>& xs, const std::array<double, N>& ys, double x) {
    int i = 0;
    while (i + 2 < int(xs.size()) && x > xs[i + 1]) ++i;
    return ys[i] + (x - xs[i]) * (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]);
  }
  double m2l_thread_translation_s(int dim, double madds) const {
    return std::max(0.0, along(m2l_thread_madds[dim == 2 ? 0 : 1], m2l_thread_s[dim == 2 ? 0 : 1], madds));
  }
  double m2l_staged_translation_s(int dim, double madds) const {
    return std::max(0.0, along(m2l_thread_madds[dim == 2 ? 0 : 1], m2l_staged_s[dim == 2 ? 0 : 1], madds));
  }
  double m2l_slot_s(double madds) const { return along(m2l_curve_madds, m2l_curve_s, madds); }
  //! Modelled milliseconds of M2L for `translations` translations of `madds` multiply-adds in all
  //! (CPU).
  double m2l_ms(double translations, double madds) const {
    return 1e3 * (madds / m2l_madds_per_s + translations * m2l_s_per_translation);
  }
};

//! The full-method cost model's constants: every rate the rule uses, per kind of device, fitted to
//! H100 bench rows of fmm (stage times against the stage counts of farfield/op_counts.h; results/fmm/
//! and results/fmm-levels/, float):
//! - GPU float: near 2.5e12 directed pairs/s (n3-rotate, the GPU default near kernel: 1.5e12 at 64
//!   per box, 2.6e12 at 512, 2.7e12 to 2.9e12 on Plummer 2^22 and 2^24 at levels 6 to 8); the passes
//!   2.1e12 multiply-adds/s: fitted as 1.2e12 (P2M + M2M + L2L + L2P at level 6: 0.61e12 at p = 4,
//!   1.17e12 at 6, 1.51e12 at 8, 1.74e12 at 10; at level 5, with 8 times the particles a leaf, 0.9e12
//!   to 2.7e12), then scaled by 1.75, the mean speed-up of the passes' time with P2M by units and L2P
//!   at a fixed order (3D uniform 2^24 level 6 p = 5, 8, 10: 1.51x, 1.94x, 1.82x; fmm-adaptive on
//!   Plummer 2^24 p = 10: 1.73x; the double rate below was not remeasured; not refitted since P2M's
//!   tiles, which made the upward pass 0.46x to 1.05x as long: results/fmm-p2m-tiles); M2L per
//!   computed slot 0.146, 0.227, 0.639 and 2.154 ns at p = 4, 6, 8, 10 (210, 924, 3003, 8008
//!   multiply-adds a translation): the means over 3D uniform, Plummer and clusters of 2^22 at
//!   levels 6 to 8 (results/fmm-levels at f7952a2): every row there within 0.92x to 1.15x of them
//!   (level 5 up to 1.88x, a few ms at most). Counted by the kernel's full slots (2^d children of
//!   every parent, 6^d - 3^d offsets each) the time a slot had varied 1.7x between a full and a
//!   sparse level at one order, and the one rate of 5.35e12 multiply-adds/s missed p = 10 by 30%:
//!   clusters at p = 6 got level 7 (80.6 ms) where 8 measured 66.8. Fitted on those very rows; the
//!   2^24 rows of results/fmm are the check outside them. Since ce64c4a (M2L's float loop unrolled,
//!   two targets a lane at p = 9..10) each point is scaled by that commit's M2L time over the
//!   earlier one on the 2^24 rows of results/fmm (uniform levels 5 and 6, Plummer level 7): 0.93,
//!   0.93, 0.89 and 0.48 at p = 4, 6, 8, 10 (0.146, 0.227, 0.639, 2.154 ns before), not refitted.
//! - GPU double (not fitted: the float figures of the earlier kernels scaled): near 0.75e12,
//!   n3-rotate's float rate times its measured double/float ratio (results/newton3-3d: 1.10e12
//!   against 2.74e12 interactions/s); M2L 0.5 ns a slot plus its multiply-adds at 2e12/s; passes
//!   0.3e12;
//! - CPU (cpu-fmm's bench rows on this project's 2-core AMD EPYC development machine, OpenMP on 2
//!   threads, at 3D uniform 2^18 levels 4 and 5 (64 and 8 a box; p = 4, 8, 12), 3D Plummer 2^18
//!   levels 5 and 6 and 2D uniform 2^20 levels 6 to 8 (p = 8); absolute rates scale with the cores,
//!   the rule weighs their ratios): near 6e9 directed pairs/s in float, 3e9 in double (the default
//!   near kernel, cpu-simd-omp-n3: 8.1e9 / 3.6e9 at 64 a box in 3D, 1.9e9 / 1.6e9 at 8, 5.8e9 / 3.7e9
//!   at 64 in 2D, 1.3e10 / 4.3e9 at 256); M2L 2.3e9 multiply-adds/s plus 110 ns a translation in
//!   float, 2.6e9 plus 100 ns in double (least squares over the 3D rows, within 0.91x to 1.33x of
//!   them; 2D translations measured 0.5x the line); passes 2.5e9 (1.4e9 to 4.7e9). The other CPU near
//!   kernels (kNearKernels): their near-field rate inside cpu-fmm over cpu-simd-omp-n3's at one point
//!   (3D uniform 2^18, level 4, 64 a box, p = 4; float / double: cpu-serial 3.1e8 / 2.2e8, cpu-n3
//!   3.5e8 / 3.4e8, cpu-omp 5.8e8 / 4.8e8, cpu-omp-n3 7.7e8 / 6.9e8, cpu-simd 4.7e9 / 1.9e9,
//!   cpu-simd-omp 6.9e9 / 2.2e9, cpu-simd-omp-n3 9.6e9 / 3.8e9) times the rate above; the adaptive
//!   methods' own near field 5.3e8 / 4.3e8 (cpu-fmm-adaptive, 3D Plummer 2^18, leaf sizes 64 and 128,
//!   p = 8).
//!   (Before cpu-simd-omp-n3 was the default near kernel and M2L summed four coefficients at a time
//!   these were provisional: near 2e9, M2L and passes 5e9, float and double alike.)
//! - The p = 12 point of the GPU float curve (3.9 ns a slot at 18564 multiply-adds) is fmm-adaptive's
//!   M2L time a translation on 3D clusters of 2^22 at leaf sizes 64 to 512 (4.4 to 5.8 ns, 4.7 taken;
//!   results/fmm-adaptive-leaf at e39cfb7) scaled by the speed-up of M2L's pipeline shape 3 (0.83,
//!   b2edfff, farfield/m2l_gpu.cu): past p = 10 the kernel takes one target a lane and fewer blocks
//!   fit an SM, so the line through p = 8 and 10 had said 2.0 ns. (Since two row quads a unit, p =
//!   12 runs one stage again, not shape 3: the scaled point stands, not refitted; docs/design.md
//!   §16 "Two quads a unit".) The GPU double curve's
//!   last point continues its last segment (no change).
//! - Since M2L's orders per offset and its balanced warp plan (farfield/offset_order.h,
//!   farfield/m2l_gpu.cu) every point is scaled by the measured M2L time over the earlier kernel's
//!   on the same H100 in one call (results/fmm-m2l-orders; 3D float, fmm uniform 2^24 level 6 at
//!   p = 4, 6, 8, 10 (dd5b2b9): 1.07, 1.05, 0.604, 0.550; level 5 at p = 12 (a3a4ccb): 0.461; from
//!   0.136, 0.211, 0.569, 1.034, 3.9 ns), not refitted; the curve's abscissa stays the multiply-adds
//!   of a translation at the full order p (the order's label).
//!   The balanced plan takes two targets a lane at 3D float p = 8 and 11 (the mask's bits). The GPU
//!   double curve is not rescaled (not measured).
//! - Since M2L's levels run at once (farfield::M2LOperators::apply_levels) the p = 12 point is 1.40
//!   ns (was 1.80): 2.46x the p = 10 point, within the measured ratios of fmm-adaptive's M2L time a
//!   translation at p = 12 over p = 10 (H200, results/fmm-adaptive-leaf-high at 9ef964e: 2.23 to 2.52
//!   on 3D Plummer 2^20 to 2^24, the shell 2^22 and uniform 2^24, mean 2.38, medians over leaf sizes 256 to
//!   508; 1.32 to 1.66 ns a translation on Plummer and uniform). It sets the automatic leaf size at
//!   p = 12 to 448 (was 508), within 1.07x of the best measured size on all five inputs (508: up to
//!   1.21x); p = 11, on the line between p = 10 and 12, to 362 (was 393). The points at p = 14, 15
//!   and 16 (38760, 54264, 74613 multiply-adds; the tensor cores' orders) are the same ratios
//!   measured there, times the p = 10 point: 3.41, 4.19 and 6.92 (means over 3D Plummer 2^22 and
//!   2^24 and the shell 2^22, results/fmm-adaptive-leaf-high/nvidia-h200-tensor.csv at 8a4f921),
//!   1.94, 2.38 and 3.94 ns; p = 13 lies on the line (2.88 measured, 2.86 there). Before, the
//!   curve's last segment continued past p = 12 (2.99 ns at p = 14). The GPU double curve's and the
//!   CPU's extra points continue their last segment (no change).
//! - The adaptive near field (adaptive_near_pairs_per_s): GPU float 1.85e12 directed pairs/s, the
//!   near stage with the leaves' mutual pairs on n3-rotate's kernel (farfield/adaptive_gpu.h) on
//!   3D Plummer 2^24 at p = 10: 1.82e12 to 2.03e12 at leaf sizes 280 to 512 (H100). Before, all
//!   one-sided: 1.35e12 (leaf sizes 128 to 512, 3D Plummer and uniform 2^24, 2D and 3D clusters
//!   2^22, results/fmm-adaptive-leaf, from e39cfb7); the 2D rate with the mutual pairs is
//!   not measured apart. GPU double: the float rate before the mutual pairs times the
//!   double/float ratio of n3-rotate (0.3): 0.4e12, not measured; CPU as above.
//! - M2L a thread per target (m2l_thread_max, m2l_thread_s; farfield/m2l_thread_gpu.h): its time a
//!   translation measured on an H200 (scripts/m2l-compare.sh, results/fmm-m2l-thread): 3D float the
//!   mean of uniform 2^24 level 6 and Plummer 2^24 level 7 at p = 2..6 (0.026 / 0.018, 0.031 /
//!   0.027, 0.051 / 0.046, 0.076 / 0.071, 0.118 / 0.127 ns; level 5 of uniform 2^24 runs 1.2-1.6x
//!   these, a level too small to fill the GPU), 2D float clusters 2^22 level 9 at p = 4..12, 3D
//!   double uniform 2^22 level 6 at p = 2..6 and 2D double clusters at p = 4, 6, 8; the 2D double
//!   curve's last three points and every curve's points beyond the orders the kernel runs there
//!   continue their last measured segment. Its wide variant (3D float p = 7: 0.165 uniform, 0.184
//!   Plummer; p = 8: 0.225 / 0.270, with the orders per offset, the point labelled by the full
//!   order's 3003 multiply-adds like the slot curve; double p = 5, 6) is on the same curves. Not
//!   yet measured on the H100. These points predate the staged moments (41975af), which run full
//!   levels 0.63-0.84x these at 3D float p = 2..6 (uniform 2^24 level 6, results/fmm-m2l-staged) and
//!   leave Plummer's sparse level 7 as it was: these curves stay the unstaged kernel's.
//! - The staged thread kernel (m2l_staged_s; on levels that fill >= 3/4 of their parents' places, at
//!   the staged orders): its time a translation on the H200 (results/fmm-m2l-staged at 41975af,
//!   the default variant, every level of the input staged): 3D float uniform 2^24 level 6 at p = 2..6
//!   (0.0204, 0.0237, 0.0322, 0.0521, 0.0793 ns), 3D double uniform 2^22 level 6 at p = 2..4
//!   (0.0230, 0.0321, 0.0555 ns), 2D uniform 2^22 level 9 (every level full; M2L_CASES=full2d, at
//!   7c34fd3) at p = 4, 6, 8 in float (0.0355, 0.0504, 0.0784 ns; unstaged there 0.0458, 0.0548,
//!   0.0996, half the clusters' curve above) and double (0.038, 0.0673, 0.1141 ns); the points at
//!   orders that never stage repeat the unstaged ones.
//! A near kernel measured apart gets a line in kNearKernels: its rate then replaces its device's.
struct FullMethodCostModel {
  static constexpr FullMethodRates kGpuFloat{2.5e12,
                                             5.35e12,
                                             2.1e12,
                                             0.123e-9,
                                             true,
                                             {0x1CFFFE, 0xF7E},
                                             {210, 924, 3003, 8008, 18564, 38760, 54264, 74613},
                                             {0.146e-9, 0.221e-9, 0.344e-9, 0.569e-9, 1.40e-9, 1.94e-9, 2.38e-9, 3.94e-9},
                                             1.85e12,
                                             {farfield::kWideMaxOrder<2, float>, farfield::kWideMaxOrder<3, float>},
                                             {{{70, 210, 495, 1001, 1820, 3640, 7280}, {28, 84, 210, 462, 924, 1716, 3003}}},
                                             {{{0.086e-9, 0.107e-9, 0.167e-9, 0.202e-9, 0.276e-9, 0.440e-9, 0.768e-9},
                                               {0.022e-9, 0.029e-9, 0.048e-9, 0.074e-9, 0.122e-9, 0.174e-9, 0.247e-9}}},
                                             4,
                                             {{{0.0355e-9, 0.0504e-9, 0.0784e-9, 0.202e-9, 0.276e-9, 0.440e-9, 0.768e-9},
                                               {0.0204e-9, 0.0237e-9, 0.0322e-9, 0.0521e-9, 0.0793e-9, 0.174e-9, 0.247e-9}}}};
  static constexpr FullMethodRates kGpuDouble{0.75e12,
                                              2e12,
                                              0.3e12,
                                              0.5e-9,
                                              true,
                                              {0x1FC7FE, 0x39E},
                                              {0, 1000, 4000, 10000, 20000, 30000, 40000, 50000},
                                              {0.5e-9, 1.0e-9, 2.5e-9, 5.5e-9, 10.5e-9, 15.5e-9, 20.5e-9, 25.5e-9},
                                              0.4e12,
                                              {farfield::kWideMaxOrder<2, double>, farfield::kWideMaxOrder<3, double>},
                                              {{{70, 210, 495, 1000, 2000, 4000, 8000}, {28, 84, 210, 462, 924, 1848, 3696}}},
                                              {{{0.120e-9, 0.154e-9, 0.197e-9, 0.273e-9, 0.424e-9, 0.726e-9, 1.330e-9},
                                                {0.030e-9, 0.054e-9, 0.091e-9, 0.144e-9, 0.266e-9, 0.510e-9, 0.998e-9}}},
                                              8,
                                              {{{0.038e-9, 0.0673e-9, 0.1141e-9, 0.273e-9, 0.424e-9, 0.726e-9, 1.330e-9},
                                                {0.0230e-9, 0.0321e-9, 0.0555e-9, 0.144e-9, 0.266e-9, 0.510e-9, 0.998e-9}}}};
  static constexpr FullMethodRates kCpu{6e9, 2.3e9, 2.5e9, 110e-9, false, {}, {0, 1, 2, 3, 4, 5, 6, 7}, {}, 5.3e8};
  static constexpr FullMethodRates kCpuDouble{3e9, 2.6e9, 2.5e9, 100e-9, false, {}, {0, 1, 2, 3, 4, 5, 6, 7}, {}, 4.3e8};
  //! A near kernel's own near rate (directed pairs/s) in float and double.
  struct NearRate {
    const char* kernel;
    double float_pairs_per_s, double_pairs_per_s;
  };
  static constexpr std::array<NearRate, 6> kNearKernels{{{"cpu-serial", 1.9e8, 1.8e8},
                                                         {"cpu-n3", 2.2e8, 2.75e8},
                                                         {"cpu-omp", 3.6e8, 3.85e8},
                                                         {"cpu-omp-n3", 4.8e8, 5.5e8},
                                                         {"cpu-simd", 2.9e9, 1.5e9},
                                                         {"cpu-simd-omp", 4.3e9, 1.75e9}}};
  //! The rates of a full method on the GPU or the CPU at `precision` with near kernel `near`.
  static FullMethodRates rates(bool gpu, Precision precision, const std::string& near);
};

//! The leaf size S that the adaptive full methods take without --leaf-size (docs/design.md §16,
//! "Adaptive tree"): with leaves of about n particles, a particle costs about 3^d n pairs in the
//! near field and (6^d - 3^d) / n translations in M2L, least at n proportional to
//! sqrt(t_translation / t_pair), and leaves hold between S / 2^d and S. With t_translation the M2L time of one
//! translation at order p (the slot curve on the GPU; multiply-adds over the M2L rate plus the
//! fixed cost on the CPU) and t_pair = 1 / adaptive_near_pairs_per_s,
//!
//!   S = c_d sqrt(t_translation / t_pair),   c_3 = 8.8, c_2 = 6.8,
//!
//! rounded, within [16, 4096]. c_d was fitted to the best measured leaf sizes of fmm-adaptive on the
//! H100 (results/fmm-adaptive-leaf, all pairs one-sided): 3D Plummer 2^24 at p = 6, 8, 10 (best S
//! 128, 256, 320..384), 2D clusters and uniform 2^22 at p = 8, 12 (best 64..128, 128). With the
//! leaves' mutual pairs (t_pair below 1.35x smaller) c_3 stays: 3D Plummer 2^24 at p = 10 is best
//! at S = 280..320 (60.8 ms on the H100; 244: 63.2, 384: 61.5, 512: 67.2), where S comes to 285.
//! c_2 went from 7.5 to 6.8 to keep 2D where its sizes are best with the mutual pairs: clusters
//! 2^22 at p = 8 best at 96..160, p = 12 at 160 (192: +2.5%); uniform 2^22 at 128..160 (measured on
//! an H200, the only card the session got for it).
std::uint32_t auto_leaf_size(int dim, int order, const FullMethodRates& rates);

//! The rule's figures at one level.
struct FullLevelCost {
  int level = 0;
  std::uint64_t boxes = 0;         //!< non-empty boxes at this level
  std::uint64_t pairs = 0;         //!< pairs(K)
  std::uint64_t translations = 0;  //!< M2L translations of levels 2..K
  //! Those of them on levels whose boxes fill at least farfield::kStagedFill of their parents'
  //! places (where the GPU's thread kernel stages the moments).
  std::uint64_t full_translations = 0;
  double near_ms = 0, far_ms = 0;  //!< modeled times of the near and the far field
  int order = 0;                   //!< the order p the method runs at this leaf level
  double ms() const { return near_ms + far_ms; }
};

//! What the rule chose, for which run, and the levels it evaluated (ascending).
struct FullLevelChoice {
  int level = 0;
  int deepest = 0;  //!< the deepest level it was allowed to consider
  bool float_capped = false;  //!< deepest is the deepest its precision takes (full_method.h: float32's two limits, float64's centres)
  bool accuracy_capped = false;  //!< deepest is the deepest where order 20 reaches the accuracy
  int dim = 2;
  std::uint64_t particles = 0;
  int order = 0;             //!< p
  std::string kernel, near;  //!< the full method and its near kernel (for the description)
  Precision precision = Precision::f32;
  FullMethodRates rates;
  std::vector<FullLevelCost> evaluated;
  //! The evaluated entry of the chosen level.
  const FullLevelCost& chosen() const;
};

//! The rule over the levels 0..deepest (deepest <= scan.deepest()) of `scan`'s input at order p
//! with `rates`; `choice`'s kernel, near and precision fields are left for the caller.
FullLevelChoice choose_full_level(const LevelScan& scan, int deepest, int order, const FullMethodRates& rates);
//! The same with an order per leaf level (from an accuracy: farfield::order_for_accuracy grows with
//! the level), never lower at a deeper level; the choice's order is the chosen level's.
FullLevelChoice choose_full_level(const LevelScan& scan, int deepest, const std::function<int(int)>& order_at,
                                  const FullMethodRates& rates);

//! The rule's figures at exactly one level (the same computation choose_full_level runs).
FullLevelCost full_level_cost(const LevelScan& scan, int level, int order, const FullMethodRates& rates);

//! One line for users: the level chosen, and per evaluated level the modeled near and far ms.
std::string describe(const FullLevelChoice& c);

}  // namespace nf
