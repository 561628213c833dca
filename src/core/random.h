#pragma once
//! Seeded random numbers with the same stream on every platform (the standard library's
//! distributions are implementation-defined, so generated inputs would differ between compilers).

#include <cmath>
#include <cstdint>
#include <random>

namespace nf {

//! 64-bit Mersenne Twister with portable uniform and normal draws.
class Random {
 public:
  explicit Random(std::uint64_t seed) : g_(seed) {}
  //! Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }
  //! Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  //! Uniform integer in [0, n) (n > 0), without modulo bias.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = ~std::uint64_t(0) - (~std::uint64_t(0) % n);
    std::uint64_t v;
    do v = g_();
    while (v >= limit);
    return v % n;
  }
  //! Standard normal (Box-Muller).
  double normal() {
    double u;
    do u = uniform();
    while (u <= 0.0);
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * uniform());
  }

 private:
  std::mt19937_64 g_;
};

//! Draw number `index` of the counter-based stream of `seed`, uniform in [0, 1) with 53 bits:
//! SplitMix64 (Steele, Lea and Flood 2014) evaluated at state mix(seed) + (index + 1) * golden
//! gamma. Any draw is computed from its index alone, so a parallel loop makes the same numbers
//! whatever its thread count (the `uniform-fast` generator).
inline double counter_uniform(std::uint64_t seed, std::uint64_t index) {
  auto mix = [](std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const std::uint64_t golden = 0x9e3779b97f4a7c15ull;
  return static_cast<double>(mix(mix(seed ^ golden) + (index + 1) * golden) >> 11) * 0x1.0p-53;
}

}  // namespace nf
