// cpu-simd and cpu-simd-omp (nearfield/cpu_simd.h, docs/design.md §3). For each target box, its
// near field (own box, then its neighbors) is gathered once into structure-of-arrays buffers
// (x, y, z, m), so every source box is one contiguous run and only the last vector of the whole
// run is partial. Each target particle is broadcast and swept over the buffer one vector of
// sources at a time (16 floats with AVX-512), its sums kept in vector registers until the end.
// This file is compiled once per instruction set by Highway's foreach_target (it includes itself)
// and the best one the CPU runs is chosen at run time. Highway is used from its headers only (its
// library is not linked), so the binary stays self-contained: the choice is made here, below.
#include "nearfield/cpu_simd.h"

#include "core/errors.h"

#if !defined(NF_HAVE_HWY)

namespace nf {
bool simd_kernels_built() { return false; }
std::vector<std::string> simd_targets_compiled() { return {}; }
std::vector<std::string> simd_targets_supported() { return {}; }
std::string simd_target() { return "none"; }
void use_simd_target(const std::string&) {
  throw UsageError("cpu-simd: this build has no Google Highway (install Debian package libhwy-dev and configure again)");
}
}  // namespace nf

#else

#ifndef NF_CPU_SIMD_SHARED
#define NF_CPU_SIMD_SHARED
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <iterator>
#include <string>
#include <vector>

#include "core/per_shape.h"
#include "nearfield/nearfield_cpu.h"
#include "physics/interaction.h"

namespace nf::simd {

//! The near field of one target box, gathered: own box at [0, own), its neighbors' particles at
//! [own_end, size), zeros after (one vector, so a masked last vector never reads past the end).
template <class T>
struct Sources {
  std::vector<T> x, y, z, m;
  std::vector<T> rx, ry, rz;  //!< Newton-3: the reactions on the sources
  std::size_t own = 0, own_end = 0, size = 0;
};

//! One thread's buffers, kept between calls (they only grow).
template <class T>
Sources<T>& thread_sources() {
  thread_local Sources<T> s;
  return s;
}

//! Gathers compact box k and the boxes of `lists` (full lists, or half lists for Newton-3) into
//! s; with `pad_own` the neighbors start at a multiple of `lanes` (whole vectors after the own box).
template <int D, class T>
void gather(const Tree& t, const Body<T>* bodies, std::uint32_t k, const NeighborLists& lists, std::size_t lanes,
            bool pad_own, bool reactions, Sources<T>& s) {
  s.own = t.compact_count(k);
  std::size_t others = 0;
  for (std::uint32_t l = lists.offset[k]; l < lists.offset[k + 1]; ++l) others += t.compact_count(lists.ids[l]);
  s.own_end = pad_own ? (s.own + lanes - 1) / lanes * lanes : s.own;
  s.size = s.own_end + others;
  const std::size_t cap = s.size + lanes;
  for (std::vector<T>* v : {&s.x, &s.y, &s.z, &s.m})
    if (v->size() < cap) v->resize(cap);
  std::size_t o = 0;
  const auto copy = [&](std::uint32_t box) {
    for (std::uint32_t p = t.box_first[box]; p < t.box_first[box + 1]; ++p, ++o) {
      const Body<T>& b = bodies[p];
      s.x[o] = b.x;
      s.y[o] = b.y;
      if constexpr (D == 3) s.z[o] = b.z;
      s.m[o] = b.m;
    }
  };
  const auto zeros = [&](std::size_t end) {
    for (; o < end; ++o) s.x[o] = s.y[o] = s.z[o] = s.m[o] = 0;
  };
  copy(k);
  zeros(s.own_end);
  for (std::uint32_t l = lists.offset[k]; l < lists.offset[k + 1]; ++l) copy(lists.ids[l]);
  zeros(cap);
  if (reactions)
    for (std::vector<T>* v : {&s.rx, &s.ry, &s.rz}) {
      if (v->size() < cap) v->resize(cap);
      std::fill(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(cap), T(0));
    }
}

//! Newton-3: adds the reactions gathered in s (same order as gather) into the sorted outputs.
template <int D, class T>
void scatter(const Tree& t, std::uint32_t k, const NeighborLists& lists, const Sources<T>& s, Acc4<T>* acc) {
  std::size_t o = 0;
  const auto add = [&](std::uint32_t box) {
    for (std::uint32_t p = t.box_first[box]; p < t.box_first[box + 1]; ++p, ++o)
      add_into(acc + p, Acc4<T>{s.rx[o], s.ry[o], D == 3 ? s.rz[o] : T(0), 0});
  };
  add(k);
  o = s.own_end;
  for (std::uint32_t l = lists.offset[k]; l < lists.offset[k + 1]; ++l) add(lists.ids[l]);
}

//! One box of the near field, computed into f.acc; returns the interactions it evaluated.
template <class T>
using BoxFn = unsigned long long (*)(const HostNearField<T>&, std::uint32_t, Sources<T>&);
//! What each instruction set's copy of this file exports: full-list and Newton-3 boxes, with and
//! without the zero-distance guard.
struct BoxKernels {
  PerShape<BoxFn> full, full_guarded, n3, n3_guarded;
};

}  // namespace nf::simd

// Highway: SSSE3 is left out (every x86-64 CPU that has it but not SSE4 is older than 2008; the
// portable EMU128 copy covers it). On other architectures only the compiler's own target is built
// (the run-time choice below knows x86 only).
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
// float's own rounding of the sums (validation: 1e-5 relative L2). Double, and the portable target
// (whose approximation is a bit trick of 1e-3): a true square root and division.
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

//! r = x_j - x_i for the vector of sources at j and its 1/(|r|^2 + eps^2)^(3/2). Guarded: zero
//! where r = 0 (the target itself, which sits in the buffer, and coincident points, which
//! contribute zero: docs/design.md §1), whatever eps. Unguarded (eps > 0 and m/eps^3 finite:
//! unguarded_is_safe) r = 0 gives 0 * finite = 0 by itself. Masked: lanes outside `valid` give 0.
template <int Dim, bool Guarded, bool Masked, class D, class V = hn::Vec<D>>
HWY_INLINE V inverse_cube_at(D d, const Sources<hn::TFromD<D>>& s, std::size_t j, const V* xi, V eps2,
                             hn::Mask<D> valid, V* r) {
  r[0] = hn::Sub(hn::LoadU(d, s.x.data() + j), xi[0]);  // r_ij         [D flops]
  r[1] = hn::Sub(hn::LoadU(d, s.y.data() + j), xi[1]);
  V r2 = Guarded ? hn::Mul(r[1], r[1]) : hn::MulAdd(r[1], r[1], eps2);  // [2 D flops]
  if constexpr (Dim == 3) {
    r[2] = hn::Sub(hn::LoadU(d, s.z.data() + j), xi[2]);
    r2 = hn::MulAdd(r[2], r[2], r2);
  }
  r2 = hn::MulAdd(r[0], r[0], r2);
  V inv3 = inverse_cube(d, Guarded ? hn::Add(r2, eps2) : r2);
  if constexpr (Guarded) inv3 = hn::IfThenElseZero(hn::Gt(r2, hn::Zero(d)), inv3);
  if constexpr (Masked) inv3 = hn::IfThenElseZero(valid, inv3);
  return inv3;
}

//! a_i += m_j r_ij / (|r_ij|^2 + eps^2)^(3/2) over one vector of sources.
template <int Dim, bool Guarded, bool Masked, class D, class V = hn::Vec<D>>
HWY_INLINE void one_sided(D d, const Sources<hn::TFromD<D>>& s, std::size_t j, const V* xi, V eps2,
                          hn::Mask<D> valid, V* a) {
  V r[3];
  const V inv3 = inverse_cube_at<Dim, Guarded, Masked>(d, s, j, xi, eps2, valid, r);
  const V sj = hn::Mul(hn::LoadU(d, s.m.data() + j), inv3);  // [1 flop]
  for (int c = 0; c < Dim; ++c) a[c] = hn::MulAdd(r[c], sj, a[c]);  // [2 D flops]
}

//! Newton's third law over one vector of sources: a_i += m_j f, and the sources' reactions -= m_i f.
template <int Dim, bool Guarded, bool Masked, class D, class V = hn::Vec<D>>
HWY_INLINE void mutual(D d, Sources<hn::TFromD<D>>& s, std::size_t j, const V* xi, V mi, V eps2,
                       hn::Mask<D> valid, V* a) {
  V r[3];
  const V inv3 = inverse_cube_at<Dim, Guarded, Masked>(d, s, j, xi, eps2, valid, r);
  const V si = hn::Mul(hn::LoadU(d, s.m.data() + j), inv3);
  const V sj = hn::Mul(mi, inv3);
  hn::TFromD<D>* reaction[3] = {s.rx.data() + j, s.ry.data() + j, s.rz.data() + j};
  for (int c = 0; c < Dim; ++c) {
    a[c] = hn::MulAdd(r[c], si, a[c]);
    hn::StoreU(hn::NegMulAdd(r[c], sj, hn::LoadU(d, reaction[c])), d, reaction[c]);
  }
}

template <int Dim, class D, class V = hn::Vec<D>>
HWY_INLINE void broadcast(D d, const Body<hn::TFromD<D>>& b, V* xi) {
  xi[0] = hn::Set(d, b.x);
  xi[1] = hn::Set(d, b.y);
  xi[2] = hn::Set(d, Dim == 3 ? b.z : 0);
}

template <int Dim, class D, class V = hn::Vec<D>>
HWY_INLINE Acc4<hn::TFromD<D>> lane_sums(D d, const V* a) {
  return {hn::GetLane(hn::SumOfLanes(d, a[0])), hn::GetLane(hn::SumOfLanes(d, a[1])),
          Dim == 3 ? hn::GetLane(hn::SumOfLanes(d, a[2])) : 0, 0};
}

//! Full lists: each particle of box k against its whole near field (cpu-serial's pairs).
template <int Dim, class T, bool Guarded>
HWY_NOINLINE unsigned long long box_full(const HostNearField<T>& f, std::uint32_t k, Sources<T>& s) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t L = hn::Lanes(d);
  const Tree& t = *f.tree;
  gather<Dim>(t, f.bodies, k, t.near_full, L, false, false, s);
  const std::size_t n = s.size, whole = n - n % L;
  const auto tail = hn::FirstN(d, n - whole);
  const V eps2 = hn::Set(d, f.eps2);
  for (std::uint32_t i = t.box_first[k]; i < t.box_first[k + 1]; ++i) {
    V xi[3], a[3] = {hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    broadcast<Dim>(d, f.bodies[i], xi);
    for (std::size_t j = 0; j < whole; j += L) one_sided<Dim, Guarded, false>(d, s, j, xi, eps2, tail, a);
    if (whole < n) one_sided<Dim, Guarded, true>(d, s, whole, xi, eps2, tail, a);
    add_into(f.acc + i, lane_sums<Dim>(d, a));
  }
  return static_cast<unsigned long long>(s.own) * (n - 1);
}

//! Newton-3: box k's own pairs once (i < j) and each pair with a half-list neighbor once.
template <int Dim, class T, bool Guarded>
HWY_NOINLINE unsigned long long box_n3(const HostNearField<T>& f, std::uint32_t k, Sources<T>& s) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::size_t L = hn::Lanes(d);
  const Tree& t = *f.tree;
  gather<Dim>(t, f.bodies, k, t.near_half, L, true, true, s);
  const std::size_t own = s.own, n = s.size, whole = s.own_end + (n - s.own_end) / L * L;
  const auto tail = hn::FirstN(d, n - whole);
  const V eps2 = hn::Set(d, f.eps2);
  const Body<T>* box = f.bodies + t.box_first[k];
  for (std::size_t li = 0; li < own; ++li) {
    V xi[3], a[3] = {hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    broadcast<Dim>(d, box[li], xi);
    const V mi = hn::Set(d, box[li].m);
    for (std::size_t j = li + 1; j < own; j += L)
      mutual<Dim, Guarded, true>(d, s, j, xi, mi, eps2, hn::FirstN(d, own - j), a);
    for (std::size_t j = s.own_end; j < whole; j += L) mutual<Dim, Guarded, false>(d, s, j, xi, mi, eps2, tail, a);
    if (whole < n) mutual<Dim, Guarded, true>(d, s, whole, xi, mi, eps2, tail, a);
    // No later target writes slot li (their sources start after them): the target's own sum joins it.
    const Acc4<T> sum = lane_sums<Dim>(d, a);
    s.rx[li] += sum.x;
    s.ry[li] += sum.y;
    if constexpr (Dim == 3) s.rz[li] += sum.z;
  }
  scatter<Dim>(t, k, t.near_half, s, f.acc);
  return static_cast<unsigned long long>(own) * (own - (own > 0)) / 2 + static_cast<unsigned long long>(own) * (n - s.own_end);
}

#define NF_SIMD_SHAPES(fn, guarded) \
  {&fn<2, float, guarded>, &fn<3, float, guarded>, &fn<2, double, guarded>, &fn<3, double, guarded>}
const BoxKernels kBoxKernels = {NF_SIMD_SHAPES(box_full, false), NF_SIMD_SHAPES(box_full, true),
                                       NF_SIMD_SHAPES(box_n3, false), NF_SIMD_SHAPES(box_n3, true)};
#undef NF_SIMD_SHAPES

}  // namespace nf::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
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
  const bool sse4 = __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") &&
                    __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") &&
                    __builtin_cpu_supports("aes");
  const bool avx2 = sse4 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
                    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
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

// Newton's third law in the one-threaded kernel (measured: docs/design.md §3).
bool serial_newton3() {
  const char* env = std::getenv("NF_SIMD_N3");
  return env && *env == '1';
}

// The box kernel of the chosen copy for this evaluation: guarded unless eps > 0 keeps every
// m_j / eps^3 finite (unguarded_is_safe; the scan of the masses is part of the timed evaluation).
template <int D, class T>
BoxFn<T> box_kernel(const HostNearField<T>& f, bool newton3) {
  const BoxKernels& k = *target().kernels;
  double max_mass = 0;
  for (std::size_t i = 0; i < f.tree->particles(); ++i) max_mass = std::max(max_mass, double(f.bodies[i].m));
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
  const simd::BoxFn<T> box = simd::box_kernel<D>(f, simd::serial_newton3());
  simd::Sources<T>& s = simd::thread_sources<T>();
  unsigned long long count = 0;
  const std::uint32_t m = simd::computed_boxes(f);
  for (std::uint32_t k = 0; k < m; ++k) count += box(f, k, s);
  if (f.counter) *f.counter += count;
}

template <int D, class T>
void cpu_simd_omp(const HostNearField<T>& f) {
  const simd::BoxFn<T> box = simd::box_kernel<D>(f, false);
  const long m = static_cast<long>(simd::computed_boxes(f));
  unsigned long long count = 0;
#pragma omp parallel reduction(+ : count)
  {
    simd::Sources<T>& s = simd::thread_sources<T>();
#pragma omp for schedule(dynamic, 1)
    for (long k = 0; k < m; ++k) count += box(f, static_cast<std::uint32_t>(k), s);
  }
  if (f.counter) *f.counter += count;
}

NF_EXPORT_CPU_NEAR_FIELD(cpu_simd, cpu_simd)
NF_EXPORT_CPU_NEAR_FIELD(cpu_simd_omp, cpu_simd_omp)

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
