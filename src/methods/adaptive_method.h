#pragma once
//! What the adaptive full methods (cpu_fmm_adaptive.cc, gpu_fmm_adaptive.cc) share: their setup
//! rules and their operation counts (docs/design.md §16, "Adaptive tree").

#include <cstdint>
#include <string>
#include <vector>

#include "methods/force_method.h"

namespace nf {

//! An adaptive method's setup as it runs on the GPU (`gpu`) or the CPU: without --order, in 3D the
//! order whose modeled error on an adaptive tree (the table times farfield::kAdaptiveMargin3,
//! measured on adaptive trees of eight 3D inputs; it does not follow the depth) is at most the
//! accuracy; in 2D the order the error model (farfield/order.h, measured on uniform trees) gives for
//! half the accuracy and, where the deepest level is known (s.level), at least the order that level
//! needs for the accuracy itself (farfield::order_for_accuracy). The accuracy is kept as the target.
//! Without --leaf-size, the leaf size of methods/full_level_rule.h's auto_leaf_size at that (3D) or
//! the half-accuracy (2D) order.
MethodSetup adaptive_setup(MethodSetup s, int dim, bool gpu);

//! The leaf size S of a setup from adaptive_setup (never 0 there).
std::uint32_t leaf_size(const MethodSetup& s);

//! Throws UsageError when the setup asks for what an adaptive method does not take (--near: its
//! near field is its own, the leaves' direct sums).
void check_adaptive_setup(const MethodSetup& s, const std::string& kernel);

//! The boxes an adaptive method keeps, per level 0..K: keys ascending, particle counts and
//! tree/adaptive.h's flags (boxes without kKept may be listed or left out).
struct AdaptiveShape {
  struct Level {
    std::vector<std::uint64_t> key;
    std::vector<std::uint32_t> count;
    std::vector<std::uint8_t> flags;
  };
  int dim = 3;
  std::vector<Level> level;
};

//! One evaluation's operation counts by stage (farfield/op_counts.h's units): P2M for the particles
//! of the kept boxes that are not expanded (levels >= 2), M2M and L2L for each kept (target) box of
//! levels >= 3, L2P for the particles of the leaves of levels >= 2, `translations` M2L entries, and
//! the leaves' directed near-field pairs (i = j not counted).
std::vector<Count> adaptive_method_counts(const AdaptiveShape& shape, int order, std::uint64_t translations);

}  // namespace nf
