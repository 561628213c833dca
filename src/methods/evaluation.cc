#include "methods/evaluation.h"

#include <sstream>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "physics/interaction.h"
#include "distributed/multi_gpu.h"

namespace nf {

const char* to_string(Mask m) { return m == Mask::all ? "all" : "near"; }

Mask parse_mask(const std::string& text) {
  if (text == "all") return Mask::all;
  if (text == "near") return Mask::near;
  throw UsageError("unknown mask '" + text + "' (expected all or near)");
}

std::uint64_t near_field_interactions(const Tree& t) {
  std::uint64_t total = 0;
  for (std::uint32_t b = 0; b < t.nonempty_boxes(); ++b) {
    const std::uint64_t n = t.slot_count(b);
    std::uint64_t around = 0;
    for (std::uint32_t k = t.near_full.offset[b]; k < t.near_full.offset[b + 1]; ++k)
      around += t.slot_count(t.near_full.ids[k]);
    total += n * (n - 1) + n * around;
  }
  return total;
}

std::vector<Body<double>> bodies_as_seen(const Particles& p, Precision precision) {
  std::vector<Body<double>> b(p.size());
  const bool f32 = precision == Precision::f32;
  auto seen = [f32](double v) { return f32 ? static_cast<double>(static_cast<float>(v)) : v; };
  for (std::size_t i = 0; i < p.size(); ++i)
    b[i] = {seen(p.x[i]), seen(p.y[i]), p.dim == 3 ? seen(p.z[i]) : 0.0, seen(p.m[i])};
  return b;
}

std::unique_ptr<Evaluation> prepare(const KernelInfo& k, const Particles& p, const ForceSetup& s) {
  if (p.dim != 2 && p.dim != 3) throw UsageError("particles must be 2D or 3D");
  if (!(s.softening >= 0.0) || !std::isfinite(s.softening))
    throw UsageError("--softening must be a finite number >= 0");
  if (k.near_field() || s.mask == Mask::near) check_level(p.dim, s.level, p.size(), ~0ull, "memory", k.near_field() && k.dense_tree());
  if (s.count_interactions && !k.near_field()) throw UsageError("counting mode is for near-field kernels");
  if (!k.make) throw UsageError("kernel " + k.name + " has no implementation in this build");
  if (s.gpus != 1) return prepare_multi_gpu(k, p, s);
  return k.make(k, p, s);
}

}  // namespace nf
