#include "methods/adaptive_method.h"

#include <algorithm>
#include <stdexcept>

#include "core/errors.h"
#include "farfield/op_counts.h"
#include "farfield/order.h"
#include "methods/full_level_rule.h"
#include "tree/adaptive.h"
#include "tree/neighbors.h"

namespace nf {

MethodSetup adaptive_setup(MethodSetup s, int dim, bool gpu) {
  int base = s.order;
  if (s.order <= 0) {
    if (s.accuracy <= 0) s.accuracy = farfield::kDefaultAccuracy;
    // In 3D the table times the margin measured on adaptive trees, at any depth; in 2D half the
    // accuracy, or the deepest level's order (farfield::adaptive_order; docs/design.md §16).
    s.order = farfield::adaptive_order(dim, s.accuracy, s.level, &base);
  }
  if (s.leaf_size == 0) s.leaf_size = auto_leaf_size(dim, base, FullMethodCostModel::rates(gpu, s.precision, ""));
  return s;
}

std::uint32_t leaf_size(const MethodSetup& s) {
  if (s.leaf_size == 0) throw std::logic_error("leaf_size: the setup has not been through adaptive_setup");
  return s.leaf_size;
}

void check_adaptive_setup(const MethodSetup& s, const std::string& kernel) {
  if (!s.near.empty())
    throw UsageError("--near " + s.near + ": " + kernel +
                     " sums its near field itself (each leaf against the boxes adjacent to it, at the leaf's level); "
                     "drop --near");
}

std::vector<Count> adaptive_method_counts(const AdaptiveShape& shape, int order, std::uint64_t translations) {
  using namespace adaptive;
  const int d = shape.dim;
  std::uint64_t p2m = 0, shifted_up = 0, shifted_down = 0, l2p = 0, near = 0;
  for (std::size_t l = 0; l < shape.level.size(); ++l) {
    const AdaptiveShape::Level& level = shape.level[l];
    for (std::size_t b = 0; b < level.key.size(); ++b) {
      const std::uint8_t f = level.flags[b];
      if (l >= 2 && (f & kKept) && !(f & kExpanded)) p2m += level.count[b];
      if (l >= 3 && (f & kKept)) ++shifted_up;
      if (l >= 3 && (f & kTarget)) ++shifted_down;
      if (!leaf(f)) continue;
      if (l >= 2) l2p += level.count[b];
      std::uint64_t keys[26], sources = level.count[b];
      const int n = d == 2 ? box_neighbor_keys<2>(level.key[b], int(l), keys) : box_neighbor_keys<3>(level.key[b], int(l), keys);
      for (int k = 0; k < n; ++k) {
        const auto it = std::lower_bound(level.key.begin(), level.key.end(), keys[k]);
        if (it != level.key.end() && *it == keys[k]) sources += level.count[std::size_t(it - level.key.begin())];
      }
      near += std::uint64_t(level.count[b]) * sources - level.count[b];
    }
  }
  const bool far = shape.level.size() > 2;
  const std::uint64_t shift = farfield::shift_madds(d, order);
  return {{"upward_madds", far ? p2m * farfield::p2m_madds(d, order) + shifted_up * shift : 0},
          {"m2l_translations", translations},
          {"m2l_madds", translations * farfield::m2l_madds_mean(d, order)},
          {"downward_madds", far ? shifted_down * shift + l2p * farfield::l2p_madds(d, order) : 0},
          {"near_pairs", near}};
}

}  // namespace nf
