#pragma once
//! The order of a full method's expansions (docs/design.md §16): given, or chosen from a target
//! accuracy by an error model of the far field's truncation.
//!
//! The model: the relative L2 error of the accelerations of a fast multipole method over this
//! project's tree (one box of separation, Cartesian expansions of total degree p) falls
//! geometrically, err(p) ~ c rho^p, with c and rho per dimension from measurements of cpu-fmm
//! against float64 all pairs. The chosen order is the smallest p whose modelled error is at most
//! the target. Mass piled at a box's corner converges more slowly than any calibrated input (the
//! one-box separation's worst case, (sqrt(d)/2)^p); deeper trees than the calibrated ones may lie
//! somewhat above the model (the error grew about 1.5x from 2D level 4 to 6).

#include <cmath>

#include "farfield/multi_index.h"

namespace nf::farfield {

//! The accuracy a full method aims at when none is asked for.
inline constexpr double kDefaultAccuracy = 1e-4;

//! The error model's constants for dimension d: err(p) = c * rho^p.
struct ErrorModel {
  double c, rho;
  double error(int p) const { return c * std::pow(rho, p); }
};

//! Fitted as an upper envelope (scripts/fmm-order.sh) to cpu-fmm's error against float64 all
//! pairs on uniform, Plummer and clustered inputs of 10 particles per leaf box, orders 4..12, at 2D
//! levels 4 and 6 and 3D levels 3 and 4 (results/fmm-order/), with M2L's orders per offset
//! (farfield/offset_order.h; in 3D from p = 8, in 2D from p = 14, beyond the fit): 2D c = 0.02453,
//! rho = 0.5092; 3D c = 0.01163, rho = 0.6227, rounded up here (3D with order p at every offset:
//! 0.01197, 0.6182). At the default 1e-4 the model picks p = 9 in 2D and 11 in 3D (the 3D model's
//! error at p = 10 is 1.02e-4; 10 before the orders per offset).
inline ErrorModel error_model(int dim) {
  return dim == 2 ? ErrorModel{0.0246, 0.510} : ErrorModel{0.0117, 0.623};
}

//! The smallest order p in 1..kMaxOrder whose modeled error is at most `accuracy` (kMaxOrder when
//! none is).
inline int order_for_accuracy(int dim, double accuracy) {
  const ErrorModel m = error_model(dim);
  for (int p = 1; p <= kMaxOrder; ++p)
    if (m.error(p) <= accuracy) return p;
  return kMaxOrder;
}

//! A full method's setup as it runs: `order` given (> 0) stays, with the accuracy as asked (0:
//! none, validate then holds the method to the model's error at that order); else the order comes
//! from the accuracy (0: kDefaultAccuracy), which is recorded, so that validate holds the method to
//! the target it was asked to reach, not to the model's error at the order it chose.
inline void resolve(int dim, int& order, double& accuracy) {
  if (order > 0) return;
  if (accuracy <= 0) accuracy = kDefaultAccuracy;
  order = order_for_accuracy(dim, accuracy);
}

}  // namespace nf::farfield
