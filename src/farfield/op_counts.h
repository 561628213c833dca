#pragma once
//! Operation counts of one evaluation of a full method, per stage, in closed form from the tree's
//! figures (docs/design.md §16): what `bench` rows report beside the stage times and what the
//! full methods' `--level auto` (methods/full_level_rule.h) weighs.
//!
//! The unit is the **multiply-add**: one product accumulated into a sum (an FMA; 2 flops). Each
//! operator is counted by its coefficient products, the model's figure, not by every instruction
//! (farfield/expansion.h's comments give the finer per-call costs, with the per-row products):
//!   P2M, per particle:         terms(p) + D p    (a product per moment; the D p factors y_a^j / j!)
//!   M2M, L2L, per child box:   C(p+2D, 2D) + D p (a product per pair (k, n - k) with |n| <= p;
//!                                                 the shift's factors)
//!   M2L, per translation:      C(q+2D, 2D)       (a product per pair (n, k), |n| + |k| <= q, q the
//!                                                 offset's order (farfield/offset_order.h), counted
//!                                                 as the mean over a full level's list offsets; the
//!                                                 derivatives of the offset not counted: the GPU
//!                                                 tabulates them per level and offset)
//!   L2P, per particle:         (D + 1) terms(p - 1) + D p (the potential and the D gradient
//!                                                 components of every term of degree < p)
//! where C(p+2D, 2D) = sum over |k| <= p of terms(p - |k|) (3003 at p = 8 in 3D, 495 in 2D).
//! M2M runs for every box of levels 3..K (into its parent, from level 2 up), L2L likewise (from
//! its parent); levels 0 and 1 have no far field, so a leaf level K < 2 counts no far field at all.
//! The near field is counted in directed pair interactions (a Newton-3 pair counts twice, i = j
//! not at all: tree/box_set.h's near_field_interactions), the unit of interactions/s.

#include <cstdint>
#include <vector>

#include "farfield/multi_index.h"
#include "farfield/offset_order.h"

namespace nf::farfield {

static_assert(coefficient_pairs(3, 8) == 3003 && coefficient_pairs(3, 16) == 74613 && coefficient_pairs(2, 8) == 495 &&
                  coefficient_pairs(2, 16) == 4845,
              "C(p+2D, 2D), as farfield/expansion.h quotes it");

//! Multiply-adds of one call of each operator (the top of this file).
constexpr std::uint64_t p2m_madds(int dim, int p) { return terms_of(dim, p) + std::uint64_t(dim) * p; }
constexpr std::uint64_t shift_madds(int dim, int p) { return coefficient_pairs(dim, p) + std::uint64_t(dim) * p; }
constexpr std::uint64_t m2l_madds(int dim, int p) { return coefficient_pairs(dim, p); }
//! M2L's multiply-adds per translation at order p with the orders per offset: the mean of
//! C(q(R)+2D, 2D) over a full level's list offsets (farfield::offset_order_weights; a level's
//! boundary and an adaptive level hold a different mix), rounded.
inline std::uint64_t m2l_madds_mean(int dim, int p) {
  const OffsetOrderWeights w = offset_order_weights(dim, offset_orders(dim, p));
  double sum = 0, count = 0;
  for (int o = 0; o <= kMaxOrder; ++o) sum += w[std::size_t(o)] * double(coefficient_pairs(dim, o)), count += w[std::size_t(o)];
  return std::uint64_t(sum / count + 0.5);
}
constexpr std::uint64_t l2p_madds(int dim, int p) {
  return (std::uint64_t(dim) + 1) * terms_of(dim, p - 1) + std::uint64_t(dim) * p;
}

//! One evaluation's counts, by the stages of a results row.
struct OpCounts {
  std::uint64_t upward = 0;        //!< P2M + M2M multiply-adds
  std::uint64_t translations = 0;  //!< M2L translations (interaction-list entries over all levels)
  std::uint64_t m2l = 0;           //!< M2L multiply-adds
  std::uint64_t downward = 0;      //!< L2L + L2P multiply-adds
  std::uint64_t near_pairs = 0;    //!< directed near-field pair interactions
  //! The far field's multiply-adds (2 flops each).
  std::uint64_t far() const { return upward + m2l + downward; }
};

//! The counts of a full method of order p on N particles whose tree has boxes[l] non-empty boxes
//! at level l = 0..K (K = boxes.size() - 1), `translations` M2L entries over all levels and
//! `near_pairs` directed near-field interactions at level K.
inline OpCounts op_counts(int dim, int p, std::uint64_t n, const std::vector<std::uint64_t>& boxes,
                          std::uint64_t translations, std::uint64_t near_pairs) {
  OpCounts c;
  c.near_pairs = near_pairs;
  const int leaf = int(boxes.size()) - 1;
  if (leaf < 2) return c;  // no far field
  std::uint64_t shifted = 0;  // boxes of levels 3..K: one M2M and one L2L each
  for (int l = 3; l <= leaf; ++l) shifted += boxes[l];
  c.upward = n * p2m_madds(dim, p) + shifted * shift_madds(dim, p);
  c.translations = translations;
  c.m2l = translations * m2l_madds_mean(dim, p);
  c.downward = shifted * shift_madds(dim, p) + n * l2p_madds(dim, p);
  return c;
}

}  // namespace nf::farfield
