// farfield/shift_tables.h: the tables of the GPU's M2M and L2L by parity (docs/design.md §16),
// evaluated on the CPU through their layout exactly as the kernels read it, against expansion.h's
// m2m and l2l summed child by child, D = 2 and 3, orders 0 .. kMaxOrder, several block sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "farfield/expansion.h"
#include "farfield/shift_tables.h"

namespace ff = nf::farfield;

// The GPU's shift tables (farfield/shift_tables.h), evaluated here through their layout exactly
// as the kernels read it (warp w's lane l runs rows 0 .. rows[w] - 1 at first[w] + 32 r + l,
// adding a chunk's sum into acc[out] when its output changes), against expansion.h's m2m and l2l
// summed child by child (shift sigma / 4 of the parent's side, ratio 1/2): the parity classes, the
// Walsh transform and the dealing of the products to lanes must give every child's sum.
namespace {

std::vector<double> layout_sums(const ff::ShiftLayout& layout, const std::vector<double>& x) {
  std::vector<double> acc(std::size_t(layout.outputs), 0);
  REQUIRE(layout.first.size() == std::size_t(layout.warps));
  for (int w = 0; w < layout.warps; ++w)
    for (int l = 0; l < 32; ++l) {
      int out = -1;
      double sum = 0;
      for (int r = 0; r < layout.rows[std::size_t(w)]; ++r) {
        const ff::ShiftLayout::Entry& e = layout.entries.at(std::size_t(layout.first[std::size_t(w)] + 32 * r + l));
        if (e.out != out) {
          if (out >= 0) acc.at(std::size_t(out)) += sum;
          out = e.out, sum = 0;
        }
        sum += e.coef * x.at(std::size_t(e.in));
      }
      if (out >= 0) acc.at(std::size_t(out)) += sum;
    }
  return acc;
}

// sigma_ch^pi = prod over the axes a in pi of sigma_a (sigma_a = +1 for child bit a = 1, else -1).
int walsh_sign(int child, int pi) {
  int s = 1;
  for (int a = 0; a < 3; ++a)
    if ((pi >> a & 1) && !(child >> a & 1)) s = -s;
  return s;
}

template <int D>
void check_shift_tables(int p, int warps) {
  constexpr int C = 1 << D;
  const int n = ff::terms<D>(p);
  std::mt19937 rng(17 + p);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> children(C, std::vector<double>(std::size_t(n)));
  for (auto& c : children)
    for (double& v : c) v = u(rng);
  double sigma[C][D];
  for (int ch = 0; ch < C; ++ch)
    for (int a = 0; a < D; ++a) sigma[ch][a] = (ch >> a & 1) ? 0.25 : -0.25;

  // M2M: the parent's moments from S^pi_k = 2^-|k| sum_ch sigma_ch^pi M^ch_k.
  std::vector<double> want(std::size_t(n), 0), S(std::size_t(C * n), 0);
  for (int ch = 0; ch < C; ++ch) ff::m2m<D, double>(children[ch].data(), sigma[ch], p, want.data(), 0.5);
  for (int pi = 0; pi < C; ++pi)
    for (int k = 0; k < n; ++k) {
      double s = 0;
      for (int ch = 0; ch < C; ++ch) s += walsh_sign(ch, pi) * children[ch][std::size_t(k)];
      S[std::size_t(pi * n + k)] = std::ldexp(s, -ff::multi_index<D>(k).degree());
    }
  const ff::ShiftLayout up = ff::balance(ff::m2m_lists<D>(p), warps);
  REQUIRE(up.outputs == n + 1);
  const std::vector<double> got = layout_sums(up, S);
  double worst = 0, scale = 0;
  for (int k = 0; k < n; ++k) {
    worst = std::max(worst, std::abs(got[std::size_t(k)] - want[std::size_t(k)]));
    scale = std::max(scale, std::abs(want[std::size_t(k)]));
  }
  CHECK(got[std::size_t(n)] == 0);  // the spare output takes padding only
  CHECK_MESSAGE(worst <= 1e-13 * scale, "M2M D ", D, " p ", p, " warps ", warps, " worst ", worst);

  // L2L: T^pi_k at pi * terms + k, then each child's L_k = 2^-(|k|+1) sum_pi sigma_ch^pi T^pi_k.
  const std::vector<double>& Lp = children[0];
  const ff::ShiftLayout down = ff::balance(ff::l2l_lists<D>(p), warps);
  REQUIRE(down.outputs == C * n + 1);
  const std::vector<double> T = layout_sums(down, Lp);
  worst = 0, scale = 0;
  for (int ch = 0; ch < C; ++ch) {
    std::vector<double> ref(std::size_t(n), 0);
    ff::l2l<D, double>(Lp.data(), sigma[ch], p, ref.data(), 0.5);
    for (int k = 0; k < n; ++k) {
      double v = 0;
      for (int pi = 0; pi < C; ++pi) v += walsh_sign(ch, pi) * T[std::size_t(pi * n + k)];
      v = std::ldexp(v, -(ff::multi_index<D>(k).degree() + 1));
      worst = std::max(worst, std::abs(v - ref[std::size_t(k)]));
      scale = std::max(scale, std::abs(ref[std::size_t(k)]));
    }
  }
  CHECK_MESSAGE(worst <= 1e-13 * scale, "L2L D ", D, " p ", p, " warps ", warps, " worst ", worst);

  // The dealing: no lane holds much more than the average, or the longest list's chunk.
  for (const ff::ShiftLayout* t : {&up, &down}) {
    std::size_t products = 0;
    for (const auto& e : t->entries) products += e.coef != 0;
    const std::size_t lanes = 32 * std::size_t(t->warps), average = (products + lanes - 1) / lanes;
    for (int r : t->rows) CHECK(std::size_t(r) <= 2 * std::max<std::size_t>(8, average));
  }
}

}  // namespace

TEST_CASE("shift tables: M2M and L2L by parity through the dealt layout equal the child-by-child shifts") {
  for (int p : {0, 1, 2, 5, 8, 13, ff::kMaxOrder})
    for (int warps : {0, 1, 3}) {
      check_shift_tables<2>(p, warps);
      check_shift_tables<3>(p, warps);
    }
}
