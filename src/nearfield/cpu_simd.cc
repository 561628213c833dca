// cpu-simd, cpu-simd-omp and cpu-simd-omp-n3 (nearfield/cpu_simd.h, docs/design.md §3). For each
// target box, its near field (own box, then its neighbors) is gathered once into
// structure-of-arrays buffers (cpu_simd_sources.h), so every source box is one contiguous run and
// only the last vector of the whole run is partial. A tile of target particles is broadcast and
// swept over the buffer one vector of sources at a time (16 floats with AVX-512), the sums kept in
// vector registers until the end. This file is compiled once per instruction set by Highway's
// foreach_target (it includes itself) and the best copy the CPU runs is chosen at run time.
// Highway is used from its headers only (its library is not linked, so the binary stays
// self-contained): the choice is made here, at the end.
#include "nearfield/cpu_simd.h"

#include "core/errors.h"

#if !defined(NF_HAVE_HWY)

namespace nf {
bool simd_kernels_built() { return false; }
std::vector<std::string> simd_targets_compiled() { return {}; }
std::vector<std::string> simd_targets_supported() { return {}; }
std::string simd_target() { return "none"; }
void use_simd_target(const std::string&) {
  throw UsageError(
      "cpu-simd: this build has no Google Highway (install Debian package libhwy-dev and configure again)");
}
}  // namespace nf

#else

#ifndef NF_CPU_SIMD_SHARED
#define NF_CPU_SIMD_SHARED
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "nearfield/cpu_simd_sources.h"
#include "physics/interaction.h"

// Highway: SSSE3 is left out (every x86-64 CPU that has it but not SSE4 is older than 2008; the
// portable copy, Highway's SCALAR or EMU128 target, covers it). On other architectures only the
// compiler's own target is built (the run-time choice below knows x86 only).
#define HWY_DISABLED_TARGETS HWY_SSSE3
#if !defined(__x86_64__) && !defined(__i386__)
#define HWY_COMPILE_ONLY_STATIC 1
#endif
#endif  // NF_CPU_SIMD_SHARED

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nearfield/cpu_simd.cc"
#include <hwy/foreach_target.h>  // includes this file again once per target
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace nf::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Float on the x86 vector targets: the hardware's approximate 1/sqrt (relative error below 2^-12,
// 2^-14 with AVX-512) and one Newton step, which leaves about 2e-7 relative error, within
// float's own rounding of the sums (validation: 1e-5 relative L2). Double, and the portable targets
// (EMU128's approximation is a bit trick of 1e-3): a true square root and division.
template <class T>
constexpr bool kApproximate = std::is_same_v<T, float> && HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR;

//! 1/d2^(3/2).                                    [float: rsqrt + 6 ops; double: sqrt, mul, div]
template <class D, class V = hn::Vec<D>>
HWY_INLINE V inverse_cube(D d, V d2) {
  using T = hn::TFromD<D>;
  if constexpr (kApproximate<T>) {
    const V y = hn::ApproximateReciprocalSqrt(d2);
    const V half_d2 = hn::Mul(hn::Set(d, T(0.5)), d2);
    const V r = hn::Mul(y, hn::NegMulAdd(half_d2, hn::Mul(y, y), hn::Set(d, T(1.5))));  // Newton step
    return hn::Mul(hn::Mul(r, r), r);
  } else {
    return hn::Div(hn::Set(d, T(1)), hn::Mul(d2, hn::Sqrt(d2)));
  }
}

//! One vector of sources at j, loaded once for a tile of targets.
template <class D, class V = hn::Vec<D>>
struct SourceVec {
  V x[3], m;
  HWY_INLINE SourceVec(D d, const Sources<hn::TFromD<D>>& s, std::size_t j, bool z)
      : x{hn::LoadU(d, s.x.data() + j), hn::LoadU(d, s.y.data() + j), z ? hn::LoadU(d, s.z.data() + j) : hn::Zero(d)},
        m(hn::LoadU(d, s.m.data() + j)) {}
};

//! r = x_j - x_i and 1/(|r|^2 + eps^2)^(3/2) for target xi and a vector of sources. Guarded:
//! zero where r = 0 (the target itself, which sits in the buffer, and coincident points, which
//! contribute zero: docs/design.md §1), whatever eps. Unguarded (eps > 0 and m/eps^3 finite:
//! unguarded_is_safe) r = 0 gives 0 * finite = 0 by itself. Masked: lanes outside `valid` give 0.
template <int Dim, bool Guarded, bool Masked, class D, class V = hn::Vec<D>>
HWY_INLINE V inverse_cube_of(D d, const SourceVec<D>& src, const V* xi, V eps2, hn::Mask<D> valid, V* r) {
  r[0] = hn::Sub(src.x[0], xi[0]);  // r_ij                              [D flops]
  r[1] = hn::Sub(src.x[1], xi[1]);
  V r2 = Guarded ? hn::Mul(r[1], r[1]) : hn::MulAdd(r[1], r[1], eps2);  // [2 D flops]
  if constexpr (Dim == 3) {
    r[2] = hn::Sub(src.x[2], xi[2]);
    r2 = hn::MulAdd(r[2], r[2], r2);
  }
  r2 = hn::MulAdd(r[0], r[0], r2);
  V inv3 = inverse_cube(d, Guarded ? hn::Add(r2, eps2) : r2);
  if constexpr (Guarded) inv3 = hn::IfThenElseZero(hn::Gt(r2, hn::Zero(d)), inv3);
  if constexpr (Masked) inv3 = hn::IfThenElseZero(valid, inv3);
  return inv3;
}

//! A tile of targets (broadcast positions xi, masses mi, sums a) against one vector of sources.
template <int Dim, int Tile, class D, class V = hn::Vec<D>>
struct Targets {
  V xi[Tile][3], mi[Tile], a[Tile][3];
  HWY_INLINE Targets(D d, const Body<hn::TFromD<D>>* b) {
    for (int t = 0; t < Tile; ++t) {
      xi[t][0] = hn::Set(d, b[t].x);
      xi[t][1] = hn::Set(d, b[t].y);
      xi[t][2] = hn::Set(d, Dim == 3 ? b[t].z : 0);
      mi[t] = hn::Set(d, b[t].m);
      a[t][0] = a[t][1] = a[t][2] = hn::Zero(d);
    }
  }
  //! a_i += m_j r_ij / (|r_ij|^2 + eps^2)^(3/2).
  template <bool Guarded, bool Masked>
  HWY_INLINE void one_sided(D d, const SourceVec<D>& src, V eps2, hn::Mask<D> valid) {
    for (int t = 0; t < Tile; ++t) {
      V r[3];
      const V sj = hn::Mul(src.m, inverse_cube_of<Dim, Guarded, Masked>(d, src, xi[t], eps2, valid, r));  // [1 flop]
      for (int c = 0; c < Dim; ++c) a[t][c] = hn::MulAdd(r[c], sj, a[t][c]);  // [2 D flops]
    }
  }
  //! Newton's third law: a_i += m_j f and, summed over the tile, the sources' reactions -= m_i f
  //! (one load and store of the reactions per tile: register j-accumulation, docs/design.md §10).
  //! Masked: target t takes only the lanes of valid[t].
  template <bool Guarded, bool Masked>
  HWY_INLINE void mutual(D d, Sources<hn::TFromD<D>>& s, std::size_t j, V eps2, const hn::Mask<D>* valid) {
    const SourceVec<D> src(d, s, j, Dim == 3);
    V react[3] = {hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    for (int t = 0; t < Tile; ++t) {
      V r[3];
      const V inv3 = inverse_cube_of<Dim, Guarded, Masked>(d, src, xi[t], eps2, valid[t], r);
      const V si = hn::Mul(src.m, inv3), sj = hn::Mul(mi[t], inv3);
      for (int c = 0; c < Dim; ++c) {
        a[t][c] = hn::MulAdd(r[c], si, a[t][c]);
        react[c] = hn::NegMulAdd(r[c], sj, react[c]);
      }
    }
    hn::TFromD<D>* out[3] = {s.rx.data() + j, s.ry.data() + j, s.rz.data() + j};
    for (int c = 0; c < Dim; ++c) hn::StoreU(hn::Add(hn::LoadU(d, out[c]), react[c]), d, out[c]);
  }
  HWY_INLINE Acc4<hn::TFromD<D>> sum(D d, int t) const {
    return {hn::GetLane(hn::SumOfLanes(d, a[t][0])), hn::GetLane(hn::SumOfLanes(d, a[t][1])),
            Dim == 3 ? hn::GetLane(hn::SumOfLanes(d, a[t][2])) : 0, 0};
  }
};

// Targets per tile: each source vector is loaded once per tile and, with Newton-3, its reactions
// loaded and stored once. As many as the registers hold: AVX-512 has 32, the others 16.
template <int Dim>
constexpr int kTile = HWY_TARGET == HWY_AVX3 ? (Dim == 2 ? 4 : 3) : 2;

//! Full lists: `Tile` particles of box k from `i` against the whole gathered near field.
template <int Dim, bool Guarded, int Tile, class D, class V = hn::Vec<D>>
HWY_INLINE void full_tile(D d, const HostNearField<hn::TFromD<D>>& f, std::uint32_t i,
                          const Sources<hn::TFromD<D>>& s) {
  const std::size_t L = hn::Lanes(d), n = s.size, whole = n - n % L;
  const V eps2 = hn::Set(d, f.eps2);
  const auto tail = hn::FirstN(d, n - whole);
  Targets<Dim, Tile, D> tg(d, f.bodies + i);
  for (std::size_t j = 0; j < whole; j += L)
    tg.template one_sided<Guarded, false>(d, SourceVec<D>(d, s, j, Dim == 3), eps2, tail);
  if (whole < n) tg.template one_sided<Guarded, true>(d, SourceVec<D>(d, s, whole, Dim == 3), eps2, tail);
  for (int t = 0; t < Tile; ++t) add_into(f.acc + i + t, tg.sum(d, t));
}

//! Full lists: each particle of box k against its whole near field (cpu-serial's pairs).
template <int Dim, class T, bool Guarded>
HWY_NOINLINE unsigned long long box_full(const HostNearField<T>& f, std::uint32_t k, std::uint32_t begin,
                                         std::uint32_t end, Sources<T>& s) {
  const hn::ScalableTag<T> d;
  const Tree& t = *f.tree;
  gather<Dim>(t, f.bodies, k, t.near_full, hn::Lanes(d), false, false, s);
  constexpr int tile = kTile<Dim>;
  std::uint32_t i = begin;
  for (; i + tile <= end; i += tile) full_tile<Dim, Guarded, tile>(d, f, i, s);
  for (; i < end; ++i) full_tile<Dim, Guarded, 1>(d, f, i, s);
  return static_cast<unsigned long long>(end - begin) * (s.size - 1);
}

//! Newton-3: `Tile` particles of box k from local index li against the sources after them in their
//! own box (lanes masked per target) and against the gathered half-list neighbors; their own sums
//! go to their reaction slots (no later tile writes them: its sources start after it), which are
//! scattered with the rest.
template <int Dim, bool Guarded, int Tile, class D, class V = hn::Vec<D>>
HWY_INLINE void n3_tile(D d, const HostNearField<hn::TFromD<D>>& f, std::size_t li, Sources<hn::TFromD<D>>& s) {
  const std::size_t L = hn::Lanes(d), own = s.own, n = s.size, whole = s.own_end + (n - s.own_end) / L * L;
  const V eps2 = hn::Set(d, f.eps2);
  Targets<Dim, Tile, D> tg(d, f.bodies + s.first + li);
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  hn::Mask<D> valid[Tile];
  for (std::size_t j = (li + 1) / L * L; j < own; j += L) {  // own box: whole vectors up to own_end
    const auto index = hn::Iota(di, static_cast<I>(j));
    const auto before_end = hn::Lt(index, hn::Set(di, static_cast<I>(own)));
    for (int t = 0; t < Tile; ++t)
      valid[t] = hn::RebindMask(d, hn::And(hn::Gt(index, hn::Set(di, static_cast<I>(li + t))), before_end));
    tg.template mutual<Guarded, true>(d, s, j, eps2, valid);
  }
  for (int t = 0; t < Tile; ++t) valid[t] = hn::FirstN(d, n - whole);
  for (std::size_t j = s.own_end; j < whole; j += L) tg.template mutual<Guarded, false>(d, s, j, eps2, valid);
  if (whole < n) tg.template mutual<Guarded, true>(d, s, whole, eps2, valid);
  for (int t = 0; t < Tile; ++t) {
    const Acc4<hn::TFromD<D>> a = tg.sum(d, t);
    s.rx[li + t] += a.x;
    s.ry[li + t] += a.y;
    if constexpr (Dim == 3) s.rz[li + t] += a.z;
  }
}

//! Newton-3: box k's own pairs once (i < j) and each pair with a half-list neighbor once, in
//! tiles of targets. With begin < end only the targets of local indices [begin, end) (a chunk of a
//! crowded box), their sums and reactions left in s for the caller to scatter; otherwise every
//! target, scattered here.
template <int Dim, class T, bool Guarded>
HWY_NOINLINE unsigned long long box_n3(const HostNearField<T>& f, std::uint32_t k, std::uint32_t begin,
                                       std::uint32_t end, Sources<T>& s) {
  const hn::ScalableTag<T> d;
  const Tree& t = *f.tree;
  gather<Dim>(t, f.bodies, k, t.near_half, hn::Lanes(d), true, true, s);
  const std::size_t own = s.own, lo = begin < end ? std::min<std::size_t>(begin, own) : 0,
                    hi = begin < end ? std::min<std::size_t>(end, own) : own;
  constexpr int tile = kTile<Dim>;
  std::size_t li = lo;
  for (; li + tile <= hi; li += tile) n3_tile<Dim, Guarded, tile>(d, f, li, s);
  for (; li < hi; ++li) n3_tile<Dim, Guarded, 1>(d, f, li, s);
  if (begin >= end) scatter<Dim>(t, k, t.near_half, s, f.acc);
  // targets li in [lo, hi): own - 1 - li pairs in their box, and the gathered neighbors
  const unsigned long long n = hi - lo;
  return n * (own - 1) - (lo + hi - 1) * n / 2 + n * (s.size - s.own_end);
}

#define NF_SIMD_SHAPES(fn, guarded) \
  {&fn<2, float, guarded>, &fn<3, float, guarded>, &fn<2, double, guarded>, &fn<3, double, guarded>}
const BoxKernels kBoxKernels = {NF_SIMD_SHAPES(box_full, false), NF_SIMD_SHAPES(box_full, true),
                                       NF_SIMD_SHAPES(box_n3, false), NF_SIMD_SHAPES(box_n3, true)};
#undef NF_SIMD_SHAPES

}  // namespace nf::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace nf {
namespace simd {
namespace {

struct Target {
  std::int64_t bit;  // Highway's target bit
  const BoxKernels* kernels;
};

// The copies compiled, best first.
const Target kTargets[] = {
#if defined(__x86_64__) || defined(__i386__)
#if HWY_TARGETS & HWY_AVX3
    {HWY_AVX3, &N_AVX3::kBoxKernels},
#endif
#if HWY_TARGETS & HWY_AVX2
    {HWY_AVX2, &N_AVX2::kBoxKernels},
#endif
#if HWY_TARGETS & HWY_SSE4
    {HWY_SSE4, &N_SSE4::kBoxKernels},
#endif
#endif
    {HWY_STATIC_TARGET, &HWY_STATIC_DISPATCH(kBoxKernels)},
};

// Whether this CPU runs a copy: every extension in Highway's target string for it (the
// instructions the compiler may use there; hwy/ops/set_macros-inl.h). __builtin_cpu_supports also
// checks that the operating system saves the AVX and AVX-512 registers.
bool runs(std::int64_t bit) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;  // F16C: CPUID leaf 1, ECX bit 29 (clang's builtin lacks it)
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx >> 29 & 1u);
  const bool sse4 = __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") &&
                    __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") &&
                    __builtin_cpu_supports("aes");
  const bool avx2 = sse4 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
                    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("fma") && f16c;
  const bool avx3 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
  if (bit == HWY_AVX3) return avx3;
  if (bit == HWY_AVX2) return avx2;
  if (bit == HWY_SSE4) return sse4;
#endif
  return bit == HWY_STATIC_TARGET;
}

bool same_name(const std::string& a, const char* b) {
  return std::equal(a.begin(), a.end(), b, b + std::char_traits<char>::length(b),
                    [](char x, char y) { return std::toupper(static_cast<unsigned char>(x)) == y; });
}

int find_target(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kTargets)); ++i)
    if (same_name(name, hwy::TargetName(kTargets[i].bit))) {
      if (!runs(kTargets[i].bit)) throw UsageError("cpu-simd: this CPU cannot run target " + name);
      return i;
    }
  std::string names;
  for (const Target& t : kTargets) names += std::string(names.empty() ? "" : ", ") + hwy::TargetName(t.bit);
  throw UsageError("cpu-simd: no target '" + name + "' in this build (compiled: " + names + ")");
}

int best_target() {
  int i = 0;
  while (!runs(kTargets[i].bit)) ++i;  // the last, the compiler's own target, always runs
  return i;
}

std::atomic<int> chosen{-1};  // index into kTargets; -1: not chosen yet

const Target& target() {
  int c = chosen.load();
  if (c < 0) {
    const char* env = std::getenv("NEARFIELD_SIMD");
    c = env && *env ? find_target(env) : best_target();
    chosen.store(c);
  }
  return kTargets[c];
}

// The box kernel of the chosen copy for this evaluation: guarded unless eps > 0 keeps every
// m_j / eps^3 finite (unguarded_is_safe). The scan of the masses is part of the timed evaluation,
// over the OpenMP kernels' threads (one thread would cost 4% of 16 threads' evaluation of 2D, 64
// per box: 16 MB read).
template <int D, class T>
BoxFn<T> box_kernel(const HostNearField<T>& f, bool newton3, bool parallel) {
  const BoxKernels& k = *target().kernels;
  const long n = static_cast<long>(f.tree->particles());
  double max_mass = 0;
#pragma omp parallel for if (parallel) schedule(static) reduction(max : max_mass)
  for (long i = 0; i < n; ++i) max_mass = std::max(max_mass, double(f.bodies[i].m));
  const bool guard = !unguarded_is_safe<T>(std::sqrt(double(f.eps2)), max_mass);
  const PerShape<BoxFn>& table = newton3 ? (guard ? k.n3_guarded : k.n3) : (guard ? k.full_guarded : k.full);
  return table.template get<D, T>();
}

// The non-empty boxes computed: the first min(computed_boxes, M) compact ids (docs/design.md §15).
template <class T>
std::uint32_t computed_boxes(const HostNearField<T>& f) {
  return std::min(f.computed_boxes, f.tree->nonempty_boxes());
}

}  // namespace
}  // namespace simd

template <int D, class T>
void cpu_simd(const HostNearField<T>& f) {
  const simd::BoxFn<T> box = simd::box_kernel<D>(f, true, false);
  simd::Sources<T>& s = simd::thread_sources<T>();
  unsigned long long count = 0;
  const std::uint32_t m = simd::computed_boxes(f);
  for (std::uint32_t k = 0; k < m; ++k) count += box(f, k, 0, 0, s);  // Newton-3: the whole box
  if (f.counter) *f.counter += count;
}

// OpenMP over the boxes: full lists (Newton3 = false), or Newton-3 in colour phases of blocks.
template <int D, class T, bool Newton3>
void omp_boxes(const HostNearField<T>& f) {
  const simd::BoxFn<T> box = simd::box_kernel<D>(f, Newton3, true);
  const Tree& t = *f.tree;
  const std::uint32_t m = simd::computed_boxes(f);
  std::vector<std::uint32_t> first;
  unsigned long long count = 0;
  if constexpr (Newton3) {
    count = simd::newton3_over_threads<D>(f, box, m);
  } else {
    std::vector<simd::Item> items;
    items.reserve(m);
    for (std::uint32_t k = 0; k < m; ++k)
      for (std::uint32_t b = t.box_first[k]; b < t.box_first[k + 1]; b += simd::kItemTargets)
        items.push_back({k, b, std::min(t.box_first[k + 1], b + simd::kItemTargets)});
    first = {0, static_cast<std::uint32_t>(items.size())};
    count = simd::over_threads<T>(first, [&](long q, simd::Sources<T>& s) {
      return box(f, items[q].box, items[q].begin, items[q].end, s);
    });
  }
  if (f.counter) *f.counter += count;
}

template <int D, class T>
void cpu_simd_omp(const HostNearField<T>& f) {
  omp_boxes<D, T, false>(f);
}
template <int D, class T>
void cpu_simd_omp_n3(const HostNearField<T>& f) {
  omp_boxes<D, T, true>(f);
}

NF_EXPORT_CPU_NEAR_FIELD(cpu_simd, cpu_simd)
NF_EXPORT_CPU_NEAR_FIELD(cpu_simd_omp, cpu_simd_omp)
NF_EXPORT_CPU_NEAR_FIELD(cpu_simd_omp_n3, cpu_simd_omp_n3)

bool simd_kernels_built() { return true; }

std::vector<std::string> simd_targets_compiled() {
  std::vector<std::string> names;
  for (const simd::Target& t : simd::kTargets) names.push_back(hwy::TargetName(t.bit));
  return names;
}

std::vector<std::string> simd_targets_supported() {
  std::vector<std::string> names;
  for (const simd::Target& t : simd::kTargets)
    if (simd::runs(t.bit)) names.push_back(hwy::TargetName(t.bit));
  return names;
}

std::string simd_target() { return hwy::TargetName(simd::target().bit); }

void use_simd_target(const std::string& name) {
  simd::chosen.store(name.empty() ? simd::best_target() : simd::find_target(name));
}

}  // namespace nf
#endif  // HWY_ONCE

#endif  // NF_HAVE_HWY
