// farfield/expansion.h's m2l_contract, which sums four local coefficients of a run at a time,
// against the old contraction one coefficient at a time (to the bit) and against the contraction
// written pair by pair from the multi-indices: L_k += sum over |n| <=
// p - |k| of (-1)^|n| M_n D_{n+k}, D = 2 and 3, every order 0 .. kMaxOrder, random moments and
// derivatives; and the padding it may read (never use) past terms(p). farfield/offset_derivatives.h's
// translations by a level's table against m2l computing the derivatives at the offset, and its
// refusal of an offset outside {-3..3}^d or adjacent.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "farfield/expansion.h"
#include "farfield/offset_derivatives.h"
#include "farfield/offset_order.h"

namespace ff = nf::farfield;

namespace {

// The contraction one coefficient at a time, as it was before it took four: the new one must give
// these very bits (each coefficient's terms in the same order).
template <int D>
void one_at_a_time(const double* M, const double* Dn, int p, double* L) {
  for (int dk = 0; dk <= p; ++dk)
    for (int bk = 0; bk <= dk; ++bk)
      for (int zk = 0; zk < ff::row_length<D>(bk); ++zk) {
        double sum = 0;
        for (int dn = 0; dn <= p - dk; ++dn) {
          double part = 0;
          for (int bn = 0; bn <= dn; ++bn) {
            const double* m = M + ff::row_start<D>(dn, bn);
            const double* g = Dn + ff::row_start<D>(dk + dn, bk + bn) + zk;
            for (int z = 0; z < ff::row_length<D>(bn); ++z) part += m[z] * g[z];
          }
          sum += (dn & 1) ? -part : part;
        }
        L[ff::row_start<D>(dk, bk) + zk] += sum;
      }
}

template <int D>
void check_orders() {
  std::mt19937_64 rng(17 + D);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int p = 0; p <= ff::kMaxOrder; ++p) {
    CAPTURE(D);
    CAPTURE(p);
    const int terms = ff::terms<D>(p);
    std::vector<double> M(terms), Dn(terms + ff::kContractPad), L0(terms), L(terms);
    for (double& v : M) v = u(rng);
    for (int i = 0; i < terms; ++i) Dn[i] = u(rng);
    // The padding holds values that would spoil any sum that used them.
    for (int i = terms; i < terms + ff::kContractPad; ++i) Dn[i] = std::numeric_limits<double>::quiet_NaN();
    for (double& v : L0) v = u(rng);
    L = L0;
    ff::m2l_contract<D, double>(M.data(), Dn.data(), p, L.data());
    std::vector<double> bits = L0;
    one_at_a_time<D>(M.data(), Dn.data(), p, bits.data());
    for (int k = 0; k < terms; ++k) CHECK(L[k] == bits[k]);
    std::vector<ff::MultiIndex> at(terms);
    for (int i = 0; i < terms; ++i) at[i] = ff::multi_index<D>(i);
    for (int k = 0; k < terms; ++k) {
      const ff::MultiIndex mk = at[k];
      double want = L0[k], scale = std::abs(L0[k]);
      for (int n = 0; n < terms; ++n) {
        const ff::MultiIndex mn = at[n];
        if (mn.degree() + mk.degree() > p) continue;
        const ff::MultiIndex sum{mn.x + mk.x, mn.y + mk.y, mn.z + mk.z};
        const double t = (mn.degree() % 2 ? -1.0 : 1.0) * M[n] * Dn[ff::index<D>(sum)];
        want += t;
        scale += std::abs(t);
      }
      CAPTURE(k);
      REQUIRE(std::isfinite(L[k]));
      CHECK(std::abs(L[k] - want) <= 1e-14 * scale);
    }
  }
}

}  // namespace

TEST_CASE("m2l_contract: four coefficients a run at a time equal the contraction pair by pair, 2D and 3D") {
  check_orders<2>();
  check_orders<3>();
}

TEST_CASE("OffsetDerivatives: a translation by the level's table equals m2l at its offset; none adjacent or outside") {
  const double h = 0.125, eps2 = 0.3;  // eps^2 in box units
  auto check = [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    std::mt19937_64 rng(5 + D);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int p : {1, 5, 12, 16}) {  // 3D from 8, 2D from 14: lower orders at the farther offsets
      const ff::OffsetOrders orders = ff::offset_orders(D, p);
      const ff::OffsetDerivatives<D, double> table(p, eps2);
      const int terms = ff::terms<D>(p);
      std::vector<double> M(terms), scratch(terms + ff::kContractPad);
      for (double& v : M) v = u(rng);
      for (const auto& R : std::vector<std::array<int, 3>>{
               {2, 0, 1}, {-3, 3, -2}, {0, -2, 3}, {4, 0, 0}, {-1, 3, -3}, {1, -1, 0}, {0, 0, 0}, {3, 3, 3}}) {
        CAPTURE(D);
        CAPTURE(p);
        CAPTURE(R[0]);
        CAPTURE(R[1]);
        double c[3], cs[3], R0[D];
        int Ri[D];
        for (int a = 0; a < D; ++a) {  // centres as a tree computes them: not exact multiples of h
          cs[a] = 0.1 + (3.5 + a) * h;
          c[a] = 0.1 + (3.5 + a + R[a]) * h;
          R0[a] = R[a];
          Ri[a] = R[a];
        }
        std::vector<double> got(terms, 0.0), want(terms, 0.0);
        bool inside = true, adjacent = true;
        for (int a = 0; a < D; ++a) {
          inside = inside && std::abs(R[a]) <= 3;
          adjacent = adjacent && std::abs(R[a]) <= 1;
        }
        CHECK((table.at(Ri) != nullptr) == (inside && !adjacent));
        if (!inside || adjacent) {  // no interaction list holds it: nothing added, and check() fails
          CHECK_FALSE(table.translate(orders, c, cs, h, M.data(), got.data()));
          CHECK(got == want);
          CHECK_THROWS_AS(table.check(false), std::logic_error);
          continue;
        }
        REQUIRE(table.translate(orders, c, cs, h, M.data(), got.data()));
        ff::m2l<D, double>(M.data(), R0, eps2, orders.at<D>(Ri), want.data(), scratch.data());
        CHECK(got == want);  // the same derivatives (integer offsets) and the same contraction
      }
    }
  };
  check(std::integral_constant<int, 2>{});
  check(std::integral_constant<int, 3>{});
}
