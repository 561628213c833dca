// farfield/: the expansion operators (src/farfield/expansion.h, docs/design.md §16) against naive
// float64 evaluations, D = 2 and 3, float and double, orders 0 .. 20, eps = 0 and eps > 0: the
// multi-index order, derivatives (an independent power series, closed forms), P2M (far field
// converges), M2M and L2L (exact), M2L + L2P (table printed), box units in float for small boxes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "farfield/expansion.h"

namespace ff = nf::farfield;
using ff::MultiIndex;

namespace {

// All multi-indices with |n| <= p in the documented order (degree, then n_x, then n_y descending),
// by brute force, independent of ff::index.
template <int D>
std::vector<MultiIndex> enumerate(int p) {
  std::vector<MultiIndex> v;
  for (int d = 0; d <= p; ++d)
    for (int x = d; x >= 0; --x)
      for (int y = d - x; y >= 0; --y)
        if (D == 3 || x + y == d) v.push_back({x, y, d - x - y});
  return v;
}

double factorial(const MultiIndex& n) {
  double f = 1;
  for (int a = 0; a < 3; ++a)
    for (int i = 2; i <= n[a]; ++i) f *= i;
  return f;
}

// D_n(R) for |n| <= p, independent of derivatives.h: G(R + y) = (s0 + 2 R.y + |y|^2)^(-1/2),
// s0 = |R|^2 + eps^2, expanded as sum_m binom(-1/2, m) s0^(-1/2-m) delta^m with delta = 2 R.y + |y|^2,
// in truncated polynomials of y (Horner, in long double: both this and the recursion cancel
// digits, about 2^|n| units of rounding at degree |n|); D_n = n! times the coefficient of y^n.
template <int D>
std::vector<double> jet_derivatives(const double* R, double eps2, int p) {
  using X = long double;
  const std::vector<MultiIndex> mi = enumerate<D>(p);
  constexpr int kSide = ff::kMaxOrder + 2;  // components 0 .. kMaxOrder + 1 (the L2P test's p + 1)
  std::vector<int> pos(kSide * kSide * kSide, -1);  // p < kSide: callers take p <= kMaxOrder + 1
  auto at = [&](const MultiIndex& n) -> int& { return pos[(n.x * kSide + n.y) * kSide + n.z]; };
  for (std::size_t i = 0; i < mi.size(); ++i) at(mi[i]) = static_cast<int>(i);
  auto multiply = [&](const std::vector<X>& a, const std::vector<X>& b) {
    std::vector<X> c(mi.size(), 0);
    for (std::size_t i = 0; i < mi.size(); ++i)
      if (a[i] != 0)
        for (std::size_t j = 0; j < mi.size() && mi[i].degree() + mi[j].degree() <= p; ++j)
          if (b[j] != 0) c[at(mi[i] + mi[j])] += a[i] * b[j];
    return c;
  };
  X s0 = eps2;
  for (int a = 0; a < D; ++a) s0 += X(R[a]) * R[a];
  std::vector<X> delta(mi.size(), 0), coef(p + 1), g(mi.size(), 0);
  for (int a = 0; a < D && p >= 1; ++a) delta[at(ff::unit(a))] = 2 * X(R[a]);
  for (int a = 0; a < D && p >= 2; ++a) delta[at(ff::unit(a) + ff::unit(a))] = 1;
  coef[0] = 1 / std::sqrt(s0);
  for (int m = 1; m <= p; ++m) coef[m] = coef[m - 1] * (X(0.5) - m) / m / s0;
  g[0] = coef[p];
  for (int m = p - 1; m >= 0; --m) {
    g = multiply(g, delta);
    g[0] += coef[m];
  }
  std::vector<double> out(mi.size());
  for (std::size_t i = 0; i < mi.size(); ++i) out[i] = static_cast<double>(g[i] * factorial(mi[i]));
  return out;
}

struct Particle {
  double x[3];
  double m;
};

// `count` particles uniform in the cube (square in 2D) of side `side` centered at c, masses in [0.5, 1.5].
template <int D>
std::vector<Particle> uniform_box(const double* c, double side, int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::vector<Particle> v(count);
  for (Particle& q : v) {
    for (int a = 0; a < 3; ++a) q.x[a] = a < D ? c[a] + side * u(rng) : 0.0;
    q.m = 1 + u(rng);
  }
  return v;
}

// Potential and acceleration at x from the particles, in float64 (§1's law).
template <int D>
void direct(const std::vector<Particle>& src, const double* x, double eps2, double& psi, double* acc) {
  psi = acc[0] = acc[1] = acc[2] = 0;
  for (const Particle& q : src) {
    double r2 = eps2, r[3] = {0, 0, 0};
    for (int a = 0; a < D; ++a) r[a] = q.x[a] - x[a], r2 += r[a] * r[a];
    const double inv = 1 / std::sqrt(r2);
    psi += q.m * inv;
    for (int a = 0; a < D; ++a) acc[a] += q.m * r[a] * inv * inv * inv;
  }
}

template <int D, class T>
void offset(const double* x, const double* z, T (&out)[D], double unit = 1) {
  for (int a = 0; a < D; ++a) out[a] = static_cast<T>((x[a] - z[a]) / unit);
}

// P2M of the particles about z, offsets in units of `unit`.
template <int D, class T>
std::vector<T> moments(const std::vector<Particle>& src, const double* z, int p, double unit = 1) {
  std::vector<T> M(ff::terms<D>(p), T(0));
  for (const Particle& q : src) {
    T r[D];
    offset<D, T>(q.x, z, r, unit);
    ff::p2m<D, T>(static_cast<T>(q.m), r, p, M.data());
  }
  return M;
}

// L2P at x of the local expansion L about z (in units of `unit`), in physical units, as doubles.
template <int D, class T>
void evaluate(const std::vector<T>& L, const double* x, const double* z, int p, double& psi, double* acc,
              double unit = 1) {
  T y[D], a[D] = {}, phi = T(0);
  offset<D, T>(x, z, y, unit);
  ff::l2p<D, T>(L.data(), y, p, a, &phi);
  psi = phi / unit;
  for (int c = 0; c < 3; ++c) acc[c] = c < D ? a[c] / (unit * unit) : 0.0;
}

// Relative L2 error of (psi, acc) over a set of targets, accumulated one target at a time.
struct RelError {
  double dpsi = 0, psi = 0, dacc = 0, acc = 0;
  void add(double p_ref, const double* a_ref, double p, const double* a, int D) {  // reference first
    dpsi += (p - p_ref) * (p - p_ref), psi += p_ref * p_ref;
    for (int c = 0; c < D; ++c) dacc += (a[c] - a_ref[c]) * (a[c] - a_ref[c]), acc += a_ref[c] * a_ref[c];
  }
  double potential() const { return std::sqrt(dpsi / psi); }
  double acceleration() const { return acc > 0 ? std::sqrt(dacc / acc) : std::sqrt(dacc); }
};

// Runs check<D, T>(args) for D = 2, 3 and T = double, float.
#define FOR_EACH_CASE(check, ...) \
  (check<2, double>(__VA_ARGS__), check<3, double>(__VA_ARGS__), check<2, float>(__VA_ARGS__), \
   check<3, float>(__VA_ARGS__))

template <class T>  // a few units of rounding of T, for comparisons that are exact in exact arithmetic
constexpr double rounding() { return sizeof(T) == 4 ? 1e-5 : 1e-13; }

}  // namespace

template <int D>
void check_order() {
  for (int p = 0; p <= ff::kMaxOrder; ++p) REQUIRE(static_cast<int>(enumerate<D>(p).size()) == ff::terms<D>(p));
  const auto mi = enumerate<D>(ff::kMaxOrder);
  for (int i = 0; i < ff::terms<D>(ff::kMaxOrder); ++i) {
    const MultiIndex n = ff::multi_index<D>(i);
    CHECK(ff::index<D>(mi[i]) == i);
    CHECK((n.x == mi[i].x && n.y == mi[i].y && n.z == mi[i].z));
  }
}

TEST_CASE("multi-indices: graded order, closed-form index and its inverse, term counts") {
  check_order<2>();
  check_order<3>();
}

template <int D, class T>
void check_derivatives(double eps) {
  const double eps2 = eps * eps, Rs[4][3] = {{1.3, -0.7, 0.4}, {2.0, 0.0, 0.0}, {-0.3, 1.9, -1.1}, {0, 0, 0}};
  double worst = 0;
  for (const auto& Rd : Rs) {
    if (eps == 0 && Rd[0] == 0) continue;  // R = 0 is undefined without softening
    const std::vector<double> ref = jet_derivatives<D>(Rd, eps2, ff::kMaxOrder);
    T R[D];
    for (int a = 0; a < D; ++a) R[a] = static_cast<T>(Rd[a]);
    for (int p : {0, 1, 2, 4, 8, 12, 16, 20}) {
      std::vector<T> out(ff::terms<D>(p));
      ff::derivatives<D, T>(R, static_cast<T>(eps2), p, out.data());
      for (int d = 0; d <= p; ++d) {  // per degree, relative to the largest |D_n| of that degree
        double scale = 0, err = 0;
        for (int i = ff::degree_start<D>(d); i < ff::degree_start<D>(d + 1); ++i) {
          scale = std::max(scale, std::abs(ref[i]));
          err = std::max(err, std::abs(static_cast<double>(out[i]) - ref[i]));
        }
        REQUIRE(std::isfinite(err));
        const double unit = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;  // the recursion cancels ~2^d units
        CHECK_MESSAGE(err <= 12 * std::ldexp(unit, d) * scale, "degree ", d, " p ", p);  // 9.1 at 2D float d = 19
        worst = std::max(worst, err / scale / std::ldexp(unit, d));
      }
      // Closed forms for |n| <= 2: f, -R_a f^3, 3 R_a R_b f^5 - delta_ab f^3 (f = G(R)).
      if (p < 2) continue;
      const double f = 1 / std::sqrt(eps2 + Rd[0] * Rd[0] + Rd[1] * Rd[1] + (D == 3 ? Rd[2] * Rd[2] : 0.0));
      const double f3 = f * f * f, u = sizeof(T) == 4 ? 1e-6 : 1e-15;
      CHECK(std::abs(out[0] - f) <= 4 * u * f);
      for (int a = 0; a < D; ++a) {
        CHECK(std::abs(out[ff::index<D>(ff::unit(a))] + Rd[a] * f3) <= 4 * u * f * f);
        for (int b = 0; b < D; ++b) {
          const double exact = 3 * Rd[a] * Rd[b] * f3 * f * f - (a == b ? f3 : 0);
          CHECK(std::abs(out[ff::index<D>(ff::unit(a) + ff::unit(b))] - exact) <= 8 * u * f3);
        }
      }
    }
  }
  MESSAGE(D, "D ", std::string(sizeof(T) == 4 ? "float" : "double"), " eps=", eps,
          ": derivatives' worst error at degree d, relative to the degree's largest, in units of 2^d u: ", worst);
}

TEST_CASE("derivatives: D_n = d^n G against an independent truncated power series and closed forms") {
  for (double eps : {0.0, 0.5}) FOR_EACH_CASE(check_derivatives, eps);
}

// P2M, then the multipole evaluated at far points in float64 (psi = sum_n (-1)^|n| M_n D_n(x - z),
// a_a = sum_n (-1)^|n| M_n D_{n+e_a}), against the direct sum. The potential's error is bounded
// by sum_j m_j t_j^(p+1) / (1 - t_j) / |X| (t_j = |x_j - z| / |X|, X = (x - z, eps)).
template <int D, class T>
void check_p2m(double eps) {
  const double eps2 = eps * eps, z[3] = {0.1, -0.2, 0.05};
  const auto src = uniform_box<D>(z, 1, 64, 7);
  const auto mi = enumerate<D>(ff::kMaxOrder + 1);  // the acceleration needs D_n for |n| <= p + 1
  const double targets[2][3] = {{2.1, 0.3, -0.2}, {-1.2, 2.4, 1.6}};
  for (const auto& x : targets) {
    double X[3] = {0, 0, 0}, X2 = eps2;
    for (int a = 0; a < D; ++a) X[a] = x[a] - z[a], X2 += X[a] * X[a];
    const std::vector<double> Dn = jet_derivatives<D>(X, eps2, ff::kMaxOrder + 1);
    double psi_ref, acc_ref[3];
    direct<D>(src, x, eps2, psi_ref, acc_ref);
    double previous = 1e300;
    for (int p = 0; p <= ff::kMaxOrder; ++p) {
      const std::vector<T> M = moments<D, T>(src, z, p);
      double bound = 0;
      for (const Particle& q : src) {
        double r2 = 0;
        for (int a = 0; a < D; ++a) r2 += (q.x[a] - z[a]) * (q.x[a] - z[a]);
        const double t = std::sqrt(r2 / X2);
        bound += q.m * std::pow(t, p + 1) / (1 - t) / std::sqrt(X2);
      }
      double psi = 0, acc[3] = {0, 0, 0};
      for (int i = 0; i < ff::terms<D>(p); ++i) {
        const double s = (mi[i].degree() & 1 ? -1.0 : 1.0) * M[i];
        psi += s * Dn[i];
        for (int a = 0; a < D; ++a) acc[a] += s * Dn[ff::index<D>(mi[i] + ff::unit(a))];
      }
      CHECK_MESSAGE(std::abs(psi - psi_ref) <= 1.01 * bound + 10 * rounding<T>() * psi_ref, "p ", p);
      RelError e;
      e.add(psi_ref, acc_ref, psi, acc, D);
      // The acceleration's error falls too, until the rounding of T.
      if (p % 4 == 0 && previous > 100 * rounding<T>()) CHECK_MESSAGE(e.acceleration() < previous, "p ", p);
      if (p % 4 == 0) previous = e.acceleration();
    }
    CHECK(previous <= std::max(1e-5, 10 * rounding<T>()));
  }
}

TEST_CASE("P2M: the multipole expansion reproduces the direct sum far away, converging with p") {
  for (double eps : {0.0, 0.3}) FOR_EACH_CASE(check_p2m, eps);
}

// Children's moments shifted to the parent equal the moments computed about the parent, to rounding
// (relative to the moments of |x - z_p|), in physical units and in box units (ratio = h_c / h_p).
template <int D, class T>
void check_m2m(double h_parent) {
  const double zp[3] = {0.3 * h_parent, -0.1 * h_parent, 0.2 * h_parent}, hc = h_parent / 2;
  for (int p : {0, 1, 2, 4, 8, 12, 16, 20}) {
    for (bool box_units : {false, true}) {
      if (!box_units && sizeof(T) == 4 && h_parent < 1) continue;  // float moments underflow (expansion.h)
      const double unit_p = box_units ? h_parent : 1, unit_c = box_units ? hc : 1;
      std::vector<T> Mp(ff::terms<D>(p), T(0));
      std::vector<Particle> all;
      for (int child = 0; child < (1 << D); ++child) {
        double zc[3] = {0, 0, 0};
        for (int a = 0; a < D; ++a) zc[a] = zp[a] + ((child >> a & 1) ? 0.5 : -0.5) * hc;
        const auto src = uniform_box<D>(zc, hc, 20, 11 + child);
        T shift[D];
        offset<D, T>(zc, zp, shift, unit_p);
        ff::m2m<D, T>(moments<D, T>(src, zc, p, unit_c).data(), shift, p, Mp.data(), T(box_units ? 0.5 : 1.0));
        all.insert(all.end(), src.begin(), src.end());
      }
      std::vector<Particle> mirrored = all;  // x - z_p replaced by |x - z_p|: the moments of |terms|
      for (Particle& q : mirrored)
        for (int a = 0; a < D; ++a) q.x[a] = zp[a] + std::abs(q.x[a] - zp[a]);
      const std::vector<double> ref = moments<D, double>(all, zp, p, unit_p);
      const std::vector<double> scale = moments<D, double>(mirrored, zp, p, unit_p);
      for (int i = 0; i < ff::terms<D>(p); ++i)
        CHECK_MESSAGE(std::abs(Mp[i] - ref[i]) <= rounding<T>() * scale[i], "p ", p, " term ", i);
    }
  }
}

TEST_CASE("M2M: shifted moments equal the moments about the new center, to rounding") {
  for (double h : {1.0, 1.0 / 64}) FOR_EACH_CASE(check_m2m, h);
}

// P2M about the source box's center, M2L to the target box's center, L2P at the target particles:
// relative L2 error (acceleration) against the direct float64 sum, per p. Boxes of side 1, centers
// 2 apart along x (one box of separation, the closest M2L pair of an FMM). And an identity: the
// truncation |n| + |k| <= p makes the potential the Taylor series of G(R0 + w), w = y - r, to degree
// p in w, whose degree-l part is |w|^l P_l(cos) / |X|^(l+1) (Legendre; X = (R0, eps) in 4D,
// cos = -R0.w / (|X| |w|)): L2P's potential equals that sum over the pairs, to rounding.

double legendre_sum(double t, double c, int p) {  // sum_{l <= p} t^l P_l(c)
  double p0 = 1, p1 = c, sum = 1, tl = 1;
  for (int l = 1; l <= p; ++l) {
    tl *= t;
    sum += tl * p1;
    const double p2 = ((2 * l + 1) * c * p1 - l * p0) / (l + 1);
    p0 = p1, p1 = p2;
  }
  return sum;
}

template <int D, class T>
std::vector<double> m2l_errors(double eps) {
  const double eps2 = eps * eps, zs[3] = {0, 0, 0}, zt[3] = {2, 0, 0};
  const auto src = uniform_box<D>(zs, 1, 200, 3), tgt = uniform_box<D>(zt, 1, 100, 5);
  std::vector<double> out;
  for (int p = 0; p <= ff::kMaxOrder; ++p) {
    const std::vector<T> M = moments<D, T>(src, zs, p);
    std::vector<T> L(ff::terms<D>(p), T(0)), scratch(ff::terms<D>(p) + ff::kContractPad);
    T R0[D];
    offset<D, T>(zt, zs, R0);
    ff::m2l<D, T>(M.data(), R0, static_cast<T>(eps2), p, L.data(), scratch.data());
    RelError e;
    double identity = 0;
    for (const Particle& x : tgt) {
      double psi_ref, acc_ref[3], psi, acc[3], truncated = 0;
      direct<D>(src, x.x, eps2, psi_ref, acc_ref);
      evaluate<D, T>(L, x.x, zt, p, psi, acc);
      e.add(psi_ref, acc_ref, psi, acc, D);
      const double X = std::sqrt(4 + eps2);  // |(R0, eps)|, R0 = (2, 0, 0)
      for (const Particle& q : src) {
        double w[3] = {0, 0, 0}, w2 = 0;
        for (int c = 0; c < D; ++c) w[c] = (x.x[c] - zt[c]) - (q.x[c] - zs[c]), w2 += w[c] * w[c];
        const double cosine = w2 > 0 ? -2 * w[0] / (X * std::sqrt(w2)) : 0;  // 1/|X - W| generates P_l
        truncated += q.m * legendre_sum(std::sqrt(w2) / X, cosine, p) / X;
      }
      identity = std::max(identity, std::abs(psi - truncated) / truncated);
    }
    CHECK_MESSAGE(identity <= rounding<T>(), "p ", p, " identity ", identity);
    out.push_back(e.acceleration());
  }
  return out;
}

TEST_CASE("M2L + L2P: well-separated boxes, error falls geometrically with p (table printed)") {
  for (double eps : {0.0, 0.1}) {
    const auto e2d = m2l_errors<2, double>(eps), e3d = m2l_errors<3, double>(eps);
    const auto e2f = m2l_errors<2, float>(eps), e3f = m2l_errors<3, float>(eps);
    std::string table = "M2L + L2P, relative L2 error of the acceleration, eps = " + std::to_string(eps) +
                        "\n   p   2D double   2D float    3D double   3D float\n";
    for (int p = 0; p <= ff::kMaxOrder; ++p) {
      char line[96];
      std::snprintf(line, sizeof line, "  %2d   %.3e   %.3e   %.3e   %.3e\n", p, e2d[p], e2f[p], e3d[p], e3f[p]);
      table += line;
    }
    MESSAGE(table);
    for (const std::vector<double>* e : {&e2d, &e3d, &e2f, &e3f}) {
      const std::vector<double>& acc = *e;
      for (int p = 4; p <= ff::kMaxOrder; p += 4)  // falls at least 3x every 4 orders, until float's floor
        if (acc[p - 4] > 1e-5) CHECK_MESSAGE(acc[p] < acc[p - 4] / 3, "p ", p);
      CHECK(acc[2] < 0.15);
      CHECK(acc[8] < 3e-3);
      CHECK(acc[16] < 1e-4);
    }
  }
}

// L2L: the shifted local expansion evaluated at points of the child box equals the original
// evaluated there, to rounding (a local expansion is a polynomial of degree p).
template <int D, class T>
void check_l2l(double eps) {
  const double eps2 = eps * eps, zs[3] = {-2, 0.5, 0}, z[3] = {0, 0, 0}, zc[3] = {0.25, -0.25, 0.25};
  const auto src = uniform_box<D>(zs, 1, 50, 13), tgt = uniform_box<D>(zc, 0.5, 30, 17);
  for (int p : {0, 1, 2, 4, 8, 12, 16, 20}) {
    const std::vector<T> M = moments<D, T>(src, zs, p);
    std::vector<T> L(ff::terms<D>(p), T(0)), Lc(ff::terms<D>(p), T(0)), scratch(ff::terms<D>(p) + ff::kContractPad);
    T R0[D], shift[D];
    offset<D, T>(z, zs, R0);
    offset<D, T>(zc, z, shift);
    ff::m2l<D, T>(M.data(), R0, static_cast<T>(eps2), p, L.data(), scratch.data());
    ff::l2l<D, T>(L.data(), shift, p, Lc.data());
    RelError e;
    for (const Particle& x : tgt) {
      double psi, a[3], psic, ac[3];
      evaluate<D, T>(L, x.x, z, p, psi, a);
      evaluate<D, T>(Lc, x.x, zc, p, psic, ac);
      e.add(psi, a, psic, ac, D);
    }
    CHECK_MESSAGE(e.potential() <= 10 * rounding<T>(), "p ", p);
    CHECK_MESSAGE(e.acceleration() <= 10 * rounding<T>(), "p ", p);
  }
}

TEST_CASE("L2L: the shifted local expansion equals the original, to rounding") {
  for (double eps : {0.0, 0.3}) FOR_EACH_CASE(check_l2l, eps);
}

// The whole chain at box side h: P2M in a leaf, M2M to its parent, M2L between parents one box
// apart, L2L to a target leaf, L2P; in box units (expansion.h) and in physical units.
template <int D, class T>
double chain_error(double h, bool box_units, double eps, int p) {
  const double H = 2 * h, eps2 = eps * eps;
  const double zps[3] = {0, 0, 0}, zpt[3] = {2 * H, 0, 0};  // parents, one parent box apart
  double zs[3] = {0, 0, 0}, zt[3] = {0, 0, 0};
  for (int a = 0; a < D; ++a) zs[a] = zps[a] + 0.5 * h, zt[a] = zpt[a] - 0.5 * h;
  const auto src = uniform_box<D>(zs, h, 100, 21), tgt = uniform_box<D>(zt, h, 50, 23);
  const double uh = box_units ? h : 1, uH = box_units ? H : 1;
  const T ratio = static_cast<T>(box_units ? 0.5 : 1.0);
  const std::vector<T> Mc = moments<D, T>(src, zs, p, uh);
  std::vector<T> Mp(ff::terms<D>(p), T(0)), Lp(ff::terms<D>(p), T(0)), Lc(ff::terms<D>(p), T(0));
  std::vector<T> scratch(ff::terms<D>(p) + ff::kContractPad);
  T s1[D], R0[D], s2[D];
  offset<D, T>(zs, zps, s1, uH);
  offset<D, T>(zpt, zps, R0, uH);
  offset<D, T>(zt, zpt, s2, uH);
  ff::m2m<D, T>(Mc.data(), s1, p, Mp.data(), ratio);
  ff::m2l<D, T>(Mp.data(), R0, static_cast<T>(eps2 / (uH * uH)), p, Lp.data(), scratch.data());
  ff::l2l<D, T>(Lp.data(), s2, p, Lc.data(), ratio);
  RelError e;
  for (const Particle& x : tgt) {
    double psi_ref, acc_ref[3], psi, acc[3];
    direct<D>(src, x.x, eps2, psi_ref, acc_ref);
    evaluate<D, T>(Lc, x.x, zt, p, psi, acc, uh);
    e.add(psi_ref, acc_ref, psi, acc, D);
  }
  return e.acceleration();
}

TEST_CASE("box units: float expansions of small boxes keep the accuracy of side-1 boxes") {
  std::string report = "P2M-M2M-M2L-L2L-L2P chain at h = 2^-10, eps = 1e-4, relative L2 error of the acceleration:\n";
  for (int p : {4, 8, 16}) {
    const double h = 1.0 / 1024, d3 = chain_error<3, double>(h, true, 1e-4, p);
    const double f3 = chain_error<3, float>(h, true, 1e-4, p), physical = chain_error<3, float>(h, false, 1e-4, p);
    // Box units are exact rescalings: side 2^-10 in box units is side 1 in physical units.
    CHECK(std::abs(chain_error<3, double>(h, true, 0.0, p) - chain_error<3, double>(1.0, false, 0.0, p)) <= 1e-12);
    CHECK(f3 <= std::max(1.5 * d3, 1e-5));
    CHECK(chain_error<2, float>(h, true, 1e-4, p) <= std::max(1.5 * chain_error<2, double>(h, true, 1e-4, p), 1e-5));
    char line[160];
    std::snprintf(line, sizeof line, "  p=%2d  3D double %.3e, float %.3e in box units, float %.3e in physical units\n",
                  p, d3, f3, physical);
    report += line;
  }
  MESSAGE(report);
}
