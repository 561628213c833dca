#pragma once
//! The derivative tensors of one level's M2L offsets on the CPU (docs/design.md §16): D_n(R) of
//! farfield/derivatives.h for every offset R in {-3..3}^d (whole box sides: an interaction list's
//! sources lie there), at order p and the level's eps^2 in box units, each followed by
//! kContractPad entries for m2l_contract. A level's translations take only these offsets, so the
//! CPU methods look them up instead of computing them per translation, as the GPU does
//! (farfield/m2l_gpu.h). A translation at a lower order q reads the first terms(q) entries, the
//! same numbers derivatives() gives at order q.

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "farfield/derivatives.h"
#include "farfield/expansion.h"
#include "farfield/multi_index.h"
#include "farfield/offset_order.h"

namespace nf::farfield {

template <int D, class T>
class OffsetDerivatives {
 public:
  static constexpr int kReach = 3;  //!< |R_a| <= kReach
  static constexpr int kSide = 2 * kReach + 1;

  OffsetDerivatives(int p, T eps2) : stride_(std::size_t(terms<D>(p)) + kContractPad) {
    int offsets = 1;
    for (int a = 0; a < D; ++a) offsets *= kSide;
    values_.assign(std::size_t(offsets) * stride_, T(0));
    for (int o = 0; o < offsets; ++o) {
      T r[D];
      bool adjacent = true;  // the near field's: no M2L
      for (int a = 0, v = o; a < D; ++a, v /= kSide) {
        const int d = v % kSide - kReach;
        r[a] = T(d);
        adjacent = adjacent && d >= -1 && d <= 1;
      }
      if (!adjacent) derivatives<D, T>(r, eps2, p, &values_[std::size_t(o) * stride_]);
    }
  }

  //! D_n(R) for |n| <= p (then the padding), or nullptr when R lies outside {-3..3}^d or is
  //! adjacent (|R_a| <= 1 on every axis: the near field's, never translated).
  const T* at(const int (&R)[D]) const {
    int o = 0;
    bool adjacent = true;
    for (int a = D - 1; a >= 0; --a) {
      if (R[a] < -kReach || R[a] > kReach) return nullptr;
      adjacent = adjacent && R[a] >= -1 && R[a] <= 1;
      o = o * kSide + R[a] + kReach;
    }
    return adjacent ? nullptr : &values_[std::size_t(o) * stride_];
  }

  //! M2L of the moments M about the source box centred at cs into L about the target box centred
  //! at c (box side h), at the order `orders` gives the offset; false (nothing added) for an offset
  //! the table lacks, which no interaction list holds (farfield/lists.h): the caller fails after
  //! its parallel loop (check()).
  bool translate(const OffsetOrders& orders, const double* c, const double* cs, double h, const T* M, T* L) const {
    int R[D];
    box_offset<D>(c, cs, h, R);
    const T* Dn = at(R);
    if (!Dn) return false;
    m2l_contract<D, T>(M, Dn, orders.at<D>(R), L);
    return true;
  }

  //! std::logic_error unless every translation of a level found its offset (`all` false).
  static void check(bool all) {
    if (!all) throw std::logic_error("M2L: an offset adjacent or outside {-3..3}^d, which no interaction list holds");
  }

 private:
  std::size_t stride_;
  std::vector<T> values_;
};

}  // namespace nf::farfield
