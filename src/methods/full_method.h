#pragma once
//! What the full methods (cpu_fmm.cc, gpu_fmm.cc) share about their setups (docs/design.md §16).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/numbers.h"

#include "farfield/derivatives.h"
#include "farfield/op_counts.h"
#include "farfield/order.h"
#include "methods/force_method.h"
#include "methods/registry.h"
#include "tree/domain.h"
#include "tree/level_rule.h"

namespace nf {

//! A full method's setup as it runs: the order given, or chosen from the accuracy at the setup's
//! level for `particles` of them (which is then kept as the validation target: farfield::resolve).
//! At --level auto the order stays 0: the level rule chooses it with the level (choose_full_level_for).
inline MethodSetup full_setup(MethodSetup s, int dim, std::uint64_t particles) {
  farfield::resolve(dim, s.level, double(particles), s.order, s.accuracy);
  return s;
}

//! full_setup at leaf level `level` (the setup's own level is auto or an estimate).
inline MethodSetup full_setup_at(MethodSetup s, int dim, int level, std::uint64_t particles) {
  s.level = level;
  return full_setup(s, dim, particles);
}

//! The setup of a full method's near-field part: the same, less the far field's options.
inline MethodSetup near_part_setup(MethodSetup s) {
  s.order = 0, s.accuracy = 0, s.near.clear(), s.leaf_size = 0, s.order_sample = 0;
  return s;
}

// Whether `spacing(far)`, the precision's spacing at the domain's coordinate farthest from the
// origin, is at most `bound` (far and the spacing into far_out and spacing_out); true below level 2
// (no far field) and for a domain at the origin.
template <class Spacing>
bool spacing_within(const Domain& d, int dim, int leaf_level, double bound, Spacing spacing_of, double* far_out,
                    double* spacing_out) {
  if (leaf_level < 2) return true;  // levels 0 and 1 have no far field
  double far = 0;
  for (int a = 0; a < dim; ++a) far = std::max({far, std::fabs(d.origin[a]), std::fabs(d.origin[a] + d.side)});
  if (!(far > 0) || !std::isfinite(far)) return true;
  const double spacing = spacing_of(far);
  if (far_out) *far_out = far;
  if (spacing_out) *spacing_out = spacing;
  return spacing <= bound;
}

//! Refuses a float32 full method on positions float32 cannot place within its leaf boxes. The
//! method's bodies are the positions rounded to float32, and its boxes those of the float64
//! positions, so a body lies up to half of float32's spacing outside the box whose expansions it
//! enters; where that spacing, at the domain's corner farthest from the origin, passes 1/8 of the
//! leaf side (`leaf_level` the deepest), the expansions are evaluated outside where they converge
//! (777 bodies near 1e7, level 3: accelerations of 1e19 where the float64 answer is 3e2). A
//! near-field kernel sums pairs directly and needs no such check, nor does a tree of fewer than 3
//! levels (no far field). Called once the domain is known. float_resolves is the test (the
//! domain's farthest coordinate and float32's spacing there into far_out and spacing_out).
inline bool float_resolves(const Domain& d, int dim, int leaf_level, double* far_out = nullptr,
                           double* spacing_out = nullptr) {
  return spacing_within(d, dim, leaf_level, std::ldexp(d.side, -leaf_level) / 8,
                        [](double x) { return float32_spacing(x); }, far_out, spacing_out);
}

//! The same in float64, with a finer bound: a full method computes its box centres in absolute
//! coordinates, so where float64's spacing at the domain's farthest coordinate passes 2^-20 of the
//! leaf side its expansions disagree by that much (a review: 4000 bodies in a cube of side 1.1 at
//! 1e13, level 3, spacing 1.4e-2 of a side, relative L2 1.5e-3 against 7e-5 at the origin; at 3e14
//! M2L stopped with an internal error). The error measured about a tenth of the ratio, so the
//! bound keeps it near 1e-7, below any accuracy the model reaches.
inline bool double_resolves(const Domain& d, int dim, int leaf_level, double* far_out = nullptr,
                            double* spacing_out = nullptr) {
  return spacing_within(
      d, dim, leaf_level, std::ldexp(d.side, -leaf_level - 20),
      [](double x) { return std::nextafter(x, std::numeric_limits<double>::infinity()) - x; }, far_out, spacing_out);
}

//! Refuses a full method whose precision cannot place its bodies and boxes at this leaf level
//! (float_resolves in float32, double_resolves in float64), naming the figures.
inline void check_float_resolution(const Domain& d, int dim, int leaf_level, Precision precision) {
  double far = 0, spacing = 0;
  if (precision == Precision::f64) {
    if (double_resolves(d, dim, leaf_level, &far, &spacing)) return;
    std::ostringstream msg;
    msg << "--precision double: the domain reaches " << far << ", where float64 values lie " << spacing
        << " apart, more than 2^-20 of the leaf boxes' side (" << std::ldexp(d.side, -leaf_level) << " at level "
        << leaf_level << "): a full method's box centres would disagree by that much; use a shallower --level, "
           "or coordinates nearer the origin";
    throw UsageError(msg.str());
  }
  if (precision != Precision::f32 || float_resolves(d, dim, leaf_level, &far, &spacing)) return;
  std::ostringstream msg;
  msg << "--precision float: the domain reaches " << far << ", where float32 values lie " << spacing
      << " apart, more than 1/8 of the leaf boxes' side (" << std::ldexp(d.side, -leaf_level) << " at level "
      << leaf_level
      << "): a full method's expansions need every body inside its box; use --precision double, a shallower "
         "--level, or coordinates nearer the origin";
  throw UsageError(msg.str());
}

//! The bodies' total |mass|.
inline double total_mass(const Particles& p) {
  double m = 0;
  for (const double v : p.m) m += std::fabs(v);
  return m;
}

//! The size of a full method's leading local-expansion terms at leaf level `leaf_level`, in the
//! expansions' units (farfield/expansion.h: lengths in box sides): `mass` (the bodies' total |m|)
//! across the nearest M2L offset (2 sides), softened by eps' = softening / side: mass (4 +
//! eps'^2)^(-3/2). A softening of many leaf sides makes it tiny: in float32 it then falls among the
//! subnormals or to zero and the far field is lost (3000 bodies of total mass 1 at level 3 in a
//! cube of side 1e-13 with softening 1, eps' = 8e13: relative L2 error 1.6e-3; at eps' = 2.7e14,
//! 8.5e-2; at 8e16, 1.0).
inline double far_field_scale(const Domain& d, int leaf_level, double softening, double mass) {
  const double e = softening / std::ldexp(d.side, -leaf_level);
  return mass * std::pow(4.0 + e * e, -1.5);
}

//! The floor on far_field_scale for float32: eight decades above its smallest normal value
//! (1.2e-38), so that the sums keep float32's relative precision.
inline constexpr double kFloatFarFieldFloor = 1e-30;

//! Whether a float32 full method at leaf level `leaf_level` keeps its far field (see
//! far_field_scale; levels 0 and 1 have none; massless inputs have nothing to lose).
inline bool float_far_field_kept(const Domain& d, int leaf_level, double softening, double mass) {
  return leaf_level < 2 || !(mass > 0) || !(d.side > 0) ||
         far_field_scale(d, leaf_level, softening, mass) >= kFloatFarFieldFloor;
}

//! Whether the bodies' total |m| alone puts the far field below float32's floor at every level
//! (far_field_scale with no softening: mass / 8): no level (>= 2) keeps it.
inline bool float_mass_too_small(double mass) { return mass > 0 && mass * 0.125 < kFloatFarFieldFloor; }

//! Refuses a float32 full method whose far field float32 cannot hold (float_far_field_kept),
//! naming the cause: the total mass (at any level) or a softening of many leaf sides.
inline void check_float_far_field(const Domain& d, int leaf_level, double softening, double mass, Precision precision) {
  if (precision != Precision::f32 || float_far_field_kept(d, leaf_level, softening, mass)) return;
  std::ostringstream msg;
  if (float_mass_too_small(mass)) {
    msg << "--precision float: the bodies' total mass " << mass << " makes a full method's expansions about "
        << far_field_scale(d, leaf_level, 0, mass) << " or less at every level, below what float32 holds to its "
        << "precision (" << kFloatFarFieldFloor << "), and its far field would be lost; use --precision double, or "
        << "masses in larger units";
    throw UsageError(msg.str());
  }
  msg << "--precision float: the softening " << softening << " spans " << softening / std::ldexp(d.side, -leaf_level)
      << " sides of the leaf boxes (" << std::ldexp(d.side, -leaf_level) << " at level " << leaf_level
      << "): a full method's expansions would be about " << far_field_scale(d, leaf_level, softening, mass)
      << " there, below what float32 holds to its precision (" << kFloatFarFieldFloor
      << "), and its far field would be lost; use --precision double or a shallower --level";
  throw UsageError(msg.str());
}

//! The largest derivative of the unsoftened kernel over the degrees up to p across the nearest
//! M2L offset (2 box sides), in box units: how much larger than the mass a local coefficient can
//! grow (about 1.8e3 at p = 10, 5.8e4 at 12, 1.2e12 at 20).
inline double largest_derivative(int p) {
  std::vector<double> d(std::size_t(farfield::terms<3>(p)));
  const double r[3] = {2.0, 0.0, 0.0};
  farfield::derivatives<3, double>(r, 0.0, p, d.data());
  double most = 0;
  for (double v : d) most = std::max(most, std::fabs(v));
  return most;
}

//! The ceiling beside kFloatFarFieldFloor: the mass times largest_derivative(p) must stay four
//! decades below float32's largest value, or the expansions overflow (5000 bodies of mass 1e32 had
//! come out NaN, and the message had blamed the softening).
inline constexpr double kFloatFarFieldCeiling = 1e34;

//! Refuses a float32 full method at order p whose expansions would pass float32's range.
inline void check_float_far_field_ceiling(double mass, int p, Precision precision) {
  if (precision != Precision::f32 || !(mass > 0)) return;
  const double scale = mass * largest_derivative(p);
  if (scale <= kFloatFarFieldCeiling) return;
  std::ostringstream msg;
  msg << "--precision float: the bodies' total mass " << mass << " makes a full method's expansions at order " << p
      << " reach about " << scale << ", near float32's largest value (" << std::numeric_limits<float>::max()
      << "); use --precision double, or masses in smaller units";
  throw UsageError(msg.str());
}

//! The deepest level, at most `deepest`, that check_float_resolution and check_float_far_field
//! accept for `precision` (in double, double_resolves): --level auto considers no level they would
//! refuse. A total mass too small for float32 at every level (float_mass_too_small) is refused.
inline int deepest_resolved_level(const Domain& d, int dim, Precision precision, double softening, double mass,
                                  int deepest) {
  if (precision != Precision::f32) {
    int l = deepest;
    while (l > 1 && !double_resolves(d, dim, l)) --l;
    return l;
  }
  // No level keeps the far field: refused, not run as direct sums at level 0 or 1 without a word.
  if (deepest >= 2) check_float_far_field(d, 2, 0, mass, precision);
  int l = deepest;
  while (l > 1 && !(float_resolves(d, dim, l) && float_far_field_kept(d, l, softening, mass))) --l;
  return l;
}

//! The near-field kernel full method k runs with setup s: --near, or k's default: on the CPU
//! default_cpu_near_kernel() (cpu-simd-omp-n3 where the build has it), on the GPU n3-rotate (the
//! fastest of the framework's GPU kernels on the H100 from 16 particles per box up: results/table3,
//! results/ppb).
inline std::string full_near_kernel(const KernelInfo& k, const MethodSetup& s) {
  return !s.near.empty() ? s.near : k.gpu() ? "n3-rotate" : default_cpu_near_kernel();
}

//! A full method's counts() (docs/design.md §16): one evaluation's operations per stage,
//! farfield/op_counts.h's closed forms from its tree: boxes[l] non-empty boxes at level l = 0..K,
//! `translations` M2L entries over all levels, and the leaf level's keys and particle offsets
//! (box_first), whose near field is counted in useful directed pairs (pairs(K) less i = i).
inline std::vector<Count> full_method_counts(int dim, int order, const std::vector<std::uint64_t>& boxes,
                                             std::uint64_t translations, const std::vector<std::uint64_t>& leaf_key,
                                             const std::vector<std::uint32_t>& leaf_first) {
  LevelBoxes leaf;
  leaf.dim = dim;
  leaf.level = boxes.empty() ? 0 : int(boxes.size()) - 1;
  leaf.key = leaf_key;
  for (std::size_t b = 0; b < leaf_key.size() && b + 1 < leaf_first.size(); ++b)
    leaf.count.push_back(leaf_first[b + 1] - leaf_first[b]);
  const std::uint64_t n = leaf_first.empty() ? 0 : leaf_first.back();
  const farfield::OpCounts c = farfield::op_counts(dim, order, n, boxes, translations, box_pairs(leaf) - n);
  return {{"upward_madds", c.upward},
          {"m2l_translations", c.translations},
          {"m2l_madds", c.m2l},
          {"downward_madds", c.downward},
          {"near_pairs", c.near_pairs}};
}

}  // namespace nf
