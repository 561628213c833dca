// The GPU all-pairs family: the bodies in input order (every k-th of them as the sources of a
// sub-sampled simulation, masses times k), a driver over them, the near-field mask on request.
// Host code only: the kernels are launched by their drivers.
#include <type_traits>

#include "core/bodies.h"
#include "core/errors.h"
#include "methods/registry.h"
#include "methods/shaped.h"
#if defined(NF_HAVE_CUDA)
#include "core/device_bodies.h"
#include "methods/potential_gpu.h"
#include "physics/interaction.h"
#endif

namespace nf {
namespace {

#if defined(NF_HAVE_CUDA)
//! Sources every k-th particle from `offset`: how many of n there are.
std::size_t subsample_count(std::size_t n, int k, std::size_t offset) {
  return offset >= n ? 0 : (n - offset + std::size_t(k) - 1) / std::size_t(k);
}

template <int D, class T>
class GpuAllPairsMethod final : public DeviceMethod {
 public:
  GpuAllPairsMethod(const GpuAllPairsKernels& kernels, const KernelInfo&, const MethodSetup& s, const Particles& like)
      : DeviceMethod(s.subsample > 1 ? ForceModel::subsampled : ForceModel::all_pairs, s),
        driver_(kernels.get<D, T>()), bodies_(like.size()), acc_(like.size()) {
    if (s.subsample > 1) sources_ = gpu::DeviceBuffer<Body<T>>(subsample_count(like.size(), s.subsample, 0));
    view_.bodies = bodies_.data();
    view_.acc = acc_.data();
    view_.n = static_cast<std::uint32_t>(like.size());
    view_.eps2 = static_cast<T>(s.softening * s.softening);
    view_.guarded = !unguarded_is_safe<T>(s.softening, like.max_mass() * s.subsample);
    view_.workspace = &workspace_;
  }

  // From host particles: the near-field mask's cells come from the float64 positions, and a
  // reference on float32-rounded inputs rounds them on the host (core/bodies.h).
  void prepare(const Particles& p, std::uint64_t step) override {
    if (setup_.mask == Mask::near) {
      cells_ = gpu::DeviceBuffer<Cell>(
          cells_from_positions(p, setup_.level, setup_.domain ? *setup_.domain : default_domain(p)));
      view_.cells = cells_.data();
    }
    if (!setup_.round_inputs_to_float) return DeviceMethod::prepare(p, step);
    const Stopwatch clock;
    const std::vector<Body<double>> seen = bodies_as_seen(p, Precision::f32);
    std::vector<Body<T>> host(seen.size());
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = {T(seen[i].x), T(seen[i].y), T(seen[i].z), T(seen[i].m)};
    bodies_.upload(host);
    host_pack_ms_ = clock.ms();
  }
  void prepare(const DeviceParticles& p, std::uint64_t step) override {
    if (setup_.round_inputs_to_float) throw std::logic_error("all-pairs: rounded inputs are prepared from the host");
    host_pack_ms_ = 0;
    pack_timer_.start();
    gather_bodies<T>(p, nullptr, p.n, bodies_.data());
    if (const int k = setup_.subsample; k > 1) {
      const std::size_t offset = step % std::uint64_t(k), count = subsample_count(p.n, k, offset);
      gather_strided_bodies<T>(p, offset, k, count, double(k), sources_.data());
      view_.sources = sources_.data();
      view_.source_count = static_cast<std::uint32_t>(count);
    }
    pack_timer_.stop();
    packed_ = true;
  }

  std::vector<double> accelerations() override {
    return acceleration_rows<D>(acc_.download());
  }
  void accelerations(DeviceVectors& out) override {
    scatter_timer_.start();
    scatter_accelerations<T>(acc_.data(), nullptr, out);
    scatter_timer_.stop();
    scattered_ = true;
  }
  void poison_output() override { acc_.fill(0xFF); }
  StageTimes times() override {
    double transfer = upload_ms() + host_pack_ms_;
    if (packed_) transfer += pack_timer_.elapsed_ms();
    if (scattered_) transfer += scatter_timer_.elapsed_ms();
    return {{{"transfer", transfer}}, evaluate_ms(), {}};
  }
  double device_potential() override {
    // Exact (every pair, true masses) also for a sub-sample: the bodies hold the unscaled masses.
    return potential_gpu::allpairs_potential<D, T>(bodies_.data(), bodies_.size(), view_.eps2, scratch_);
  }
  std::string device_potential_method() const override {
    return std::string("GPU, pair terms in ") + to_string(setup_.precision) + ", sums in float64";
  }

 protected:
  void clear_output() override { acc_.fill(0); }
  void compute() override { driver_(view_); }

 private:
  GpuAllPairsFn<T> driver_;
  gpu::DeviceBuffer<Body<T>> bodies_, sources_;
  gpu::DeviceBuffer<Cell> cells_;
  gpu::DeviceBuffer<Acc4<T>> acc_;
  gpu::Workspace workspace_, scratch_;
  AllPairsView<T> view_;
  gpu::EventTimer pack_timer_, scatter_timer_;
  double host_pack_ms_ = 0;
  bool packed_ = false, scattered_ = false;
};
#else
template <int D, class T>
class GpuAllPairsMethod;  // CUDA builds only
#endif

}  // namespace

MethodFamily gpu_all_pairs(const GpuAllPairsKernels& kernels) {
  MethodFactory make = [kernels](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_on_device<ForceMethod, GpuAllPairsMethod>(k.name, like.dim, s.precision, kernels, k, s, like);
  };
  return {std::move(make), {}};
}

}  // namespace nf
