#pragma once
//! M2L's order per offset (docs/design.md §16, "Orders per offset").
//!
//! A translation between boxes of one level whose centres lie r box sides apart (2 <= r <= 3
//! sqrt(d) in the interaction lists) truncated at total degree q errs by about (a / r)^(q+1) / r:
//! the expansions' terms of degree q fall like the particles' distances from their centres over r.
//! The nearest offsets (r = 2, the faces) set the method's error at order p; the farther ones reach
//! the same error at a lower degree. So the translation across offset R keeps the terms
//! |n| + |k| <= q(R), the smallest q whose modelled error is at most f times the nearest offsets'
//! at p: L_k (|k| <= q) += sum over |n| <= q - |k|. The expansions keep order p (P2M, M2M, L2L and
//! L2P are unchanged); only M2L's sums get shorter. a and f are calibrated against measured errors
//! (scripts/fmm-order.sh): the error stays within 1.28x of the full sums' at every order, and 3D
//! M2L does about a third of the multiply-adds at p = 10. Only from 3D p = 8 and 2D p = 14 on
//! (kOffsetOrdersFrom), and not at the highest order, kMaxOrder: that one is run for the error
//! floor, and the shorter sums raised it (3D Plummer 2^20 in double at p = 20: 1.16e-6 relative L2
//! with them, 9.5e-7 with order p everywhere; the target there is 1e-6).
//! NEARFIELD_M2L_ORDERS=full keeps order p at every offset (comparisons).

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/env.h"
#include "core/errors.h"
#include "core/hd.h"
#include "farfield/multi_index.h"

namespace nf::farfield {

//! The largest squared offset length (box sides) of an interaction list: 3^2 d.
inline constexpr int kMaxOffsetR2 = 27;

//! Order q(R) for every squared offset length r2 = |R|^2 in 0..kMaxOffsetR2, at order p in dimension
//! dim: p for r2 <= 4 (and for every r2 below kOffsetOrdersFrom multiply-adds a translation, at
//! p = kMaxOrder, or when NEARFIELD_M2L_ORDERS=full), else the rule above. A plain struct: kernels
//! take it by value.
struct OffsetOrders {
  int q[kMaxOffsetR2 + 1];
  NF_HD int operator[](int r2) const { return q[r2]; }
  //! The order of the offset R (box sides).
  template <int D>
  NF_HD int at(const int (&R)[D]) const {
    int r2 = 0;
    for (int a = 0; a < D; ++a) r2 += R[a] * R[a];
    return q[r2];
  }
};

//! The rule's constants a and f, the same in 2D and 3D (NEARFIELD_M2L_GRADE=a,f overrides both,
//! calibration).
struct OffsetRule {
  double a, f;
};

inline OffsetRule offset_rule() {
  const std::string v = env::value("NEARFIELD_M2L_GRADE");
  if (v.empty()) return OffsetRule{1.0, 0.25};
  double a = 0, f = 0;
  int used = 0;
  if (v.find_first_of(" \t\n\v\f\r") != std::string::npos ||
      std::sscanf(v.c_str(), "%lf,%lf%n", &a, &f, &used) != 2 || used != int(v.size()) || !(a > 0 && a < 1e3) ||
      !(f > 0 && f < 1e3))
    throw UsageError("NEARFIELD_M2L_GRADE=" + v + ": expected a,f (two numbers above 0 and below 1000)");
  return OffsetRule{a, f};
}

//! Whether NEARFIELD_M2L_ORDERS=full asks for order p at every offset (=graded: the rule, the default).
inline bool offset_orders_full() { return env::choice("NEARFIELD_M2L_ORDERS", {"graded", "full"}) == "full"; }

//! Refuses (UsageError) a wrong NEARFIELD_M2L_ORDERS or NEARFIELD_M2L_GRADE, at any order: the full
//! methods call it when they prepare, before any work.
inline void check_offset_order_variables() {
  offset_orders_full();
  offset_rule();
}

//! The orders per offset apply where a translation at order p has at least this many multiply-adds
//! (3D p >= 8, 2D p >= 14). Below it the GPU kernel's per-offset work is small and the shorter sums
//! did not pay for their bookkeeping (H100, 3D float uniform 2^24 level 6: M2L 8.0 -> 9.5 ms at
//! p = 4, 12.3 -> 12.9 at p = 6, 0.62 -> 0.66 ms at 2D p = 8 on 2^22), so order p stays everywhere.
inline constexpr std::uint64_t kOffsetOrdersFrom = 3000;

inline OffsetOrders offset_orders(int dim, int p) {
  OffsetOrders q;
  for (int& o : q.q) o = p;
  check_offset_order_variables();  // at every order
  if (offset_orders_full() || p >= kMaxOrder || coefficient_pairs(dim, p) < kOffsetOrdersFrom) return q;
  const OffsetRule rule = offset_rule();
  // log of the nearest offsets' modelled error at p, times f
  const double bound = std::log(rule.f) + (p + 1) * std::log(rule.a / 2) - std::log(2.0);
  for (int r2 = 5; r2 <= kMaxOffsetR2; ++r2) {
    const double r = std::sqrt(double(r2));
    if (rule.a >= r) continue;
    int o = p;
    while (o > 0 && o * std::log(rule.a / r) - std::log(r) <= bound) --o;  // degree o - 1 suffices
    q.q[r2] = o;
  }
  return q;
}

//! How many of a full level's list offsets take each order 0..kMaxOrder: the 6^d - 3^d candidates
//! R (c - 3 .. c + 2 per axis, not all within 1) of each of the 2^d child positions c.
using OffsetOrderWeights = std::array<double, kMaxOrder + 1>;
inline OffsetOrderWeights offset_order_weights(int dim, const OffsetOrders& orders) {
  OffsetOrderWeights w{};
  for (int c = 0; c < (1 << dim); ++c)
    for (int u = 0; u < (dim == 3 ? 216 : 36); ++u) {
      int r2 = 0;
      bool near = true;
      for (int a = 0, v = u; a < dim; ++a, v /= 6) {
        const int r = v % 6 + ((c >> a) & 1) - 3;
        r2 += r * r;
        near = near && r >= -1 && r <= 1;
      }
      if (!near) w[std::size_t(orders[r2])] += 1.0;
    }
  return w;
}

//! The offset R = (c - cs) / h, in whole box sides, from a source box centred at cs to a target
//! box centred at c (box side h).
template <int D>
void box_offset(const double* c, const double* cs, double h, int (&R)[D]) {
  for (int a = 0; a < D; ++a) R[a] = int(std::lround((c[a] - cs[a]) / h));
}

}  // namespace nf::farfield
