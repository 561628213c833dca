// The GPU kernel families: near-field kernels over the GPU tree, and all-pairs kernels. Host
// code only: the drivers (nearfield_gpu.h, allpairs_gpu.h) launch the kernels.
#include <algorithm>
#include <type_traits>

#include "common/errors.h"
#include "common/gpu_runtime.h"
#include "common/interaction.h"
#include "harness/device_part.h"
#include "harness/eval_common.h"
#include "harness/evaluation.h"

namespace nf {
namespace {

#if defined(NF_HAVE_CUDA)
// A plain driver function as a kernel without a plan.
template <class T>
class FunctionKernel final : public GpuNearFieldKernel<T> {
 public:
  explicit FunctionKernel(GpuNearFieldFn<T> f) : f_(f) {}
  void plan(const NearFieldView<T>&) override {}
  void launch(const NearFieldView<T>& v) override { f_(v); }

 private:
  GpuNearFieldFn<T> f_;
};

template <class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_kernel(GpuNearFieldFn<T> f) {
  return std::make_unique<FunctionKernel<T>>(f);
}
template <class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_kernel(GpuNearFieldMakerFn<T> maker) {
  return maker();
}

// Also a DevicePart: one GPU's share of a multi-GPU evaluation, on the device current when it
// was prepared, with ForceSetup::placement taking the whole input's path choices.
template <int D, class T>
class GpuNearField : public Evaluation, public DevicePart {
 public:
  template <class Drivers>
  GpuNearField(const Drivers& drivers, const KernelInfo& k, const Particles& p, const ForceSetup& s)
      : kernel_(make_kernel(drivers.template get<D, T>())), atomics_(k.atomics), particles_(upload_particles(p)),
        builder_(D, s.level, p.size(), k.dense_tree) {
    builder_.build(particles_, &s.domain, &gpu_build);
    tree_ms = gpu_build.total;
    const DeviceTree& t = builder_.tree();
    gather_bodies<T>(particles_, t, bodies_);
    acc_ = gpu::DeviceBuffer<Acc4<T>>(p.size());
    order_ = t.order.download();
    if (s.count_interactions) counter_ = gpu::DeviceBuffer<unsigned long long>(1);
    view_.bodies = bodies_.data();
    view_.acc = acc_.data();
    view_.box_key = t.box_key.data();
    view_.box_first = t.box_first.data();
    view_.particle_slot = t.particle_slot.data();
    view_.near_offset = k.newton3 ? t.near_half_offset.data() : t.near_full_offset.data();
    view_.near_ids = k.newton3 ? t.near_half_ids.data() : t.near_full_ids.data();
    view_.nonempty_count = t.nonempty_count;
    if (t.dense) {
      view_.box_start = t.box_start.data();
      view_.particle_box = t.particle_box.data();
      view_.nonempty = t.nonempty.data();
      view_.neighbor_offset = k.newton3 ? t.half_offset.data() : t.full_offset.data();
      view_.neighbor_ids = k.newton3 ? t.half_ids.data() : t.full_ids.data();
    }
    view_.n = t.n;
    view_.max_box_count = t.max_box_count;
    view_.eps2 = detail::softening_squared<T>(s.softening);
    view_.guarded = !unguarded_is_safe<T>(s.softening, p.max_mass());
    view_.counter = s.count_interactions ? counter_.data() : nullptr;
    view_.workspace = &workspace_;
    if (const DevicePlacement* where = s.placement) {
      view_.guarded = !unguarded_is_safe<T>(s.softening, where->max_mass);
      view_.max_box_count = std::max(view_.max_box_count, where->max_box_count);
      view_.nonempty_count = std::min(view_.nonempty_count, where->target_boxes);
    }
    timer_.start();
    kernel_->plan(view_);
    timer_.stop();
    plan_ms = timer_.elapsed_ms();
    gpu::synchronize();
  }
  void launch() {
    if (view_.counter) counter_.fill(0);
    if (atomics_) acc_.fill(0);  // part of the evaluation: the kernel only adds into acc
    kernel_->launch(view_);
  }
  void finish() {
    gpu::synchronize();
    if (view_.counter) counted_ = counter_.download()[0];
  }
  void run() override {
    launch();
    finish();
  }
  double run_timed_ms() override {
    timer_.start();
    launch();
    timer_.stop();
    const double ms = timer_.elapsed_ms();
    finish();
    return ms;
  }
  std::vector<double> accelerations() override { return detail::scatter<D, T>(acc_.download(), order_); }
  void poison_output() override { acc_.fill(0xFF); }

  // DevicePart
  void launch_async() override { launch(); }
  void* device_bodies() override { return bodies_.data(); }
  void* device_acc() override { return acc_.data(); }
  std::size_t body_bytes() const override { return sizeof(Body<T>); }
  std::size_t acc_bytes() const override { return sizeof(Acc4<T>); }
  bool double_precision() const override { return std::is_same_v<T, double>; }
  std::vector<std::uint32_t> tree_box_first() const override {
    const DeviceTree& t = builder_.tree();
    std::vector<std::uint32_t> first(std::size_t(t.nonempty_count) + 1, 0);
    if (t.n) gpu::copy_to_host(first.data(), t.box_first.data(), first.size() * sizeof(std::uint32_t));
    return first;
  }
  std::vector<std::uint64_t> tree_box_key() const override {
    const DeviceTree& t = builder_.tree();
    std::vector<std::uint64_t> key(t.nonempty_count);
    if (!key.empty()) gpu::copy_to_host(key.data(), t.box_key.data(), key.size() * sizeof(std::uint64_t));
    return key;
  }
  const std::vector<std::uint32_t>& sorted_order() const override { return order_; }
  std::vector<double> sorted_accelerations() override { return detail::widen<D, T>(acc_.download()); }

 private:
  std::unique_ptr<GpuNearFieldKernel<T>> kernel_;
  bool atomics_;
  DeviceParticles particles_;
  GpuTreeBuilder builder_;
  gpu::DeviceBuffer<Body<T>> bodies_;
  gpu::DeviceBuffer<Acc4<T>> acc_;
  gpu::DeviceBuffer<unsigned long long> counter_;
  gpu::Workspace workspace_;
  std::vector<std::uint32_t> order_;
  NearFieldView<T> view_;
  gpu::EventTimer timer_;
};

template <int D, class T>
class GpuAllPairs : public Evaluation {
 public:
  GpuAllPairs(const PerShape<GpuAllPairsFn>& drivers, const KernelInfo&, const Particles& p, const ForceSetup& s)
      : driver_(drivers.get<D, T>()) {
    std::vector<Body<T>> host(p.size());
    const std::vector<Body<double>> seen = bodies_as_seen(p, s.round_inputs_to_float ? Precision::f32 : Precision::f64);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = {T(seen[i].x), T(seen[i].y), T(seen[i].z), T(seen[i].m)};
    bodies_ = gpu::DeviceBuffer<Body<T>>(host);
    if (s.mask == Mask::near) cells_ = gpu::DeviceBuffer<Cell>(cells_from_positions(p, s.level, s.domain));
    acc_ = gpu::DeviceBuffer<Acc4<T>>(p.size());
    view_.bodies = bodies_.data();
    view_.cells = s.mask == Mask::near ? cells_.data() : nullptr;
    view_.acc = acc_.data();
    view_.n = static_cast<std::uint32_t>(p.size());
    view_.eps2 = detail::softening_squared<T>(s.softening);
    view_.guarded = !unguarded_is_safe<T>(s.softening, p.max_mass());
    view_.workspace = &workspace_;
  }
  void run() override {
    driver_(view_);
    gpu::synchronize();
  }
  double run_timed_ms() override {
    timer_.start();
    driver_(view_);
    timer_.stop();
    return timer_.elapsed_ms();
  }
  std::vector<double> accelerations() override { return detail::widen<D, T>(acc_.download()); }
  void poison_output() override { acc_.fill(0xFF); }

 private:
  GpuAllPairsFn<T> driver_;
  gpu::DeviceBuffer<Body<T>> bodies_;
  gpu::DeviceBuffer<Cell> cells_;
  gpu::DeviceBuffer<Acc4<T>> acc_;
  gpu::Workspace workspace_;
  AllPairsView<T> view_;
  gpu::EventTimer timer_;
};
#endif

#if !defined(NF_HAVE_CUDA)
template <int, class>
class GpuNearField;
template <int, class>
class GpuAllPairs;
#endif

// A GPU factory: the family's Evaluation, or the reason it cannot run here.
template <template <int, class> class E, class Drivers>
KernelFactory gpu_factory(Drivers drivers) {
  return [drivers](const KernelInfo& k, const Particles& p, const ForceSetup& s) -> std::unique_ptr<Evaluation> {
    gpu::require("kernel " + k.name);
#if defined(NF_HAVE_CUDA)
    return detail::make_shaped<E>(p.dim, s.precision, drivers, k, p, s);
#else
    (void)p, (void)s;
    throw UsageError("kernel " + k.name + " needs a CUDA GPU: " + gpu::unavailable_reason());
#endif
  };
}

}  // namespace

KernelFactory gpu_near_field(PerShape<GpuNearFieldFn> drivers) { return gpu_factory<GpuNearField>(drivers); }
KernelFactory gpu_near_field_planned(PerShape<GpuNearFieldMakerFn> makers) { return gpu_factory<GpuNearField>(makers); }
KernelFactory gpu_all_pairs(PerShape<GpuAllPairsFn> drivers) { return gpu_factory<GpuAllPairs>(drivers); }

}  // namespace nf
