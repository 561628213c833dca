// The GPU kernel families: near-field kernels over the GPU tree, and all-pairs kernels. Host
// code only: the drivers (nearfield_gpu.h, allpairs_gpu.h) launch the kernels.
#include <algorithm>
#include <type_traits>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "physics/interaction.h"
#include "methods/device_part.h"
#include "methods/eval_common.h"
#include "methods/evaluation.h"
#include "methods/force_field.h"

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

// What an evaluation and a simulation share for a near-field kernel: the builder, the sorted
// bodies, the kernel with its plan, its output (sorted order) and the view of all of them.
template <int D, class T>
class NearFieldRun {
 public:
  //! `placement` (multi-GPU parts): the whole input's path choices, so the part runs as one GPU would.
  template <class Maker>
  NearFieldRun(const Maker& maker, const KernelInfo& k, int level, std::size_t n, double softening, double max_mass,
               bool count, const DevicePlacement* placement = nullptr)
      : kernel_(make_kernel(maker)), atomics_(k.atomics()), newton3_(k.newton3()),
        builder_(D, level, n, k.dense_tree()), acc_(n) {
    if (count) counter_ = gpu::DeviceBuffer<unsigned long long>(1);
    if (placement) placement_ = *placement, placed_ = true;
    view_.eps2 = detail::softening_squared<T>(softening);
    view_.guarded = !unguarded_is_safe<T>(softening, placed_ ? placement_.max_mass : max_mass);
    view_.counter = count ? counter_.data() : nullptr;
    view_.workspace = &workspace_;
  }
  // The tree of p (domain null: reduced on the GPU), the bodies in its order, the kernel's plan.
  // The gather and the plan are timed by events read later (gather_ms, plan_ms).
  void rebuild(const DeviceParticles& p, const Domain* domain, GpuBuildTimes* build) {
    builder_.build(p, domain, build);
    gather_timer_.start();
    gather_bodies<T>(p, builder_.tree(), bodies_);
    gather_timer_.stop();
    refresh_and_plan();
  }
  // The same for a simulation's state, which moves into the tree's order with the bodies
  // (ForceField::accelerations_moving): afterwards p, v and index are in sorted order.
  void rebuild_moving(DeviceParticles& p, DeviceVectors& v, gpu::DeviceBuffer<std::uint32_t>& index,
                      GpuBuildTimes* build) {
    builder_.build(p, nullptr, build);
    const DeviceTree& t = builder_.tree();
    if (bodies_.size() != t.n) bodies_ = gpu::DeviceBuffer<Body<T>>(t.n);
    gather_timer_.start();
    field_gpu::reorder_state<T>(t.order.data(), p, v, index, spare_, bodies_.data());
    gather_timer_.stop();
    refresh_and_plan();
  }
  // The view of the last build (the builder may have grown its buffers), and the kernel's plan.
  void refresh_and_plan() {
    const DeviceTree& t = builder_.tree();
    view_.bodies = bodies_.data();
    view_.acc = acc_.data();
    view_.box_key = t.box_key.data();
    view_.box_first = t.box_first.data();
    view_.particle_slot = t.particle_slot.data();
    view_.near_full_offset = t.near_full_offset.data();
    view_.near_full_ids = t.near_full_ids.data();
    view_.near_offset = newton3_ ? t.near_half_offset.data() : t.near_full_offset.data();
    view_.near_ids = newton3_ ? t.near_half_ids.data() : t.near_full_ids.data();
    view_.nonempty_count = t.nonempty_count;
    if (t.dense) {
      view_.box_start = t.box_start.data();
      view_.particle_box = t.particle_box.data();
      view_.nonempty = t.nonempty.data();
      view_.neighbor_offset = newton3_ ? t.half_offset.data() : t.full_offset.data();
      view_.neighbor_ids = newton3_ ? t.half_ids.data() : t.full_ids.data();
    }
    view_.n = t.n;
    view_.max_box_count = t.max_box_count;
    view_.tree_boxes = t.nonempty_count;
    if (placed_) {
      view_.max_box_count = std::max(view_.max_box_count, placement_.max_box_count);
      view_.nonempty_count = std::min(view_.nonempty_count, placement_.target_boxes);
    }
    plan_timer_.start();
    kernel_->plan(view_);
    plan_timer_.stop();
  }
  double gather_ms() { return gather_timer_.elapsed_ms(); }
  double plan_ms() { return plan_timer_.elapsed_ms(); }
  void launch() {
    if (view_.counter) counter_.fill(0);
    if (atomics_) acc_.fill(0);  // part of the evaluation: the kernel only adds into acc
    kernel_->launch(view_);
  }
  unsigned long long counted() const { return view_.counter ? counter_.download()[0] : 0; }
  const DeviceTree& tree() const { return builder_.tree(); }
  gpu::DeviceBuffer<Acc4<T>>& acc() { return acc_; }
  const Body<T>* bodies() const { return bodies_.data(); }
  Body<T>* bodies() { return bodies_.data(); }
  T eps2() const { return view_.eps2; }

 private:
  std::unique_ptr<GpuNearFieldKernel<T>> kernel_;
  bool atomics_, newton3_;
  GpuTreeBuilder builder_;
  gpu::DeviceBuffer<Body<T>> bodies_;
  gpu::DeviceBuffer<Acc4<T>> acc_;
  gpu::DeviceBuffer<unsigned long long> counter_;
  gpu::Workspace workspace_;
  NearFieldView<T> view_;
  gpu::EventTimer gather_timer_, plan_timer_;
  field_gpu::StateSpare spare_;  // rebuild_moving's second set of state arrays
  DevicePlacement placement_;
  bool placed_ = false;
};

// Also a DevicePart: one GPU's share of a multi-GPU evaluation, on the device current when it
// was prepared, with ForceSetup::placement taking the whole input's path choices.
template <int D, class T>
class GpuNearField : public Evaluation, public DevicePart {
 public:
  template <class Drivers>
  GpuNearField(const Drivers& drivers, const KernelInfo& k, const Particles& p, const ForceSetup& s)
      : particles_(upload_particles(p)),
        run_(drivers.template get<D, T>(), k, s.level, p.size(), s.softening, p.max_mass(), s.count_interactions,
             s.placement) {
    run_.rebuild(particles_, &s.domain, &gpu_build);
    tree_ms = gpu_build.total;
    plan_ms = run_.plan_ms();
    order_ = run_.tree().order.download();
    gpu::synchronize();
  }
  void finish() {
    gpu::synchronize();
    counted_ = run_.counted();
  }
  void run() override {
    run_.launch();
    finish();
  }
  double run_timed_ms() override {
    timer_.start();
    run_.launch();
    timer_.stop();
    const double ms = timer_.elapsed_ms();
    finish();
    return ms;
  }
  std::vector<double> accelerations() override { return detail::scatter<D, T>(run_.acc().download(), order_); }
  void poison_output() override { run_.acc().fill(0xFF); }

  // DevicePart
  void launch_async() override { run_.launch(); }
  void* device_bodies() override { return run_.bodies(); }
  void* device_acc() override { return run_.acc().data(); }
  std::size_t body_bytes() const override { return sizeof(Body<T>); }
  std::size_t acc_bytes() const override { return sizeof(Acc4<T>); }
  bool double_precision() const override { return std::is_same_v<T, double>; }
  std::vector<std::uint32_t> tree_box_first() const override {
    const DeviceTree& t = run_.tree();
    std::vector<std::uint32_t> first(std::size_t(t.nonempty_count) + 1, 0);
    if (t.n) gpu::copy_to_host(first.data(), t.box_first.data(), first.size() * sizeof(std::uint32_t));
    return first;
  }
  std::vector<std::uint64_t> tree_box_key() const override {
    const DeviceTree& t = run_.tree();
    std::vector<std::uint64_t> key(t.nonempty_count);
    if (!key.empty()) gpu::copy_to_host(key.data(), t.box_key.data(), key.size() * sizeof(std::uint64_t));
    return key;
  }
  const std::vector<std::uint32_t>& sorted_order() const override { return order_; }
  std::vector<double> sorted_accelerations() override { return detail::widen<D, T>(run_.acc().download()); }

 private:
  DeviceParticles particles_;
  NearFieldRun<D, T> run_;
  std::vector<std::uint32_t> order_;
  gpu::EventTimer timer_;
};

// A simulation's near-field forces: the particles stay on the device; every step rebuilds the
// tree (over the step's own default domain, reduced on the GPU), gathers, plans, launches and
// scatters the accelerations back to input order.
template <int D, class T>
class GpuNearFieldForces : public ForceField {
 public:
  template <class Drivers>
  GpuNearFieldForces(const Drivers& drivers, const KernelInfo& k, const Particles& p, const FieldSetup& s)
      : ForceField(FieldModel::near_field, s),
        run_(drivers.template get<D, T>(), k, s.level, p.size(), s.softening, p.max_mass(), false) {}
  bool on_device() const override { return true; }
  void accelerations(const DeviceParticles& p, std::uint64_t, DeviceVectors& out) override {
    GpuBuildTimes build;
    run_.rebuild(p, nullptr, &build);
    compute(build, run_.tree().order.data(), out);
  }
  // The simulation's path: the state follows the tree's order, so the accelerations need no scatter.
  bool accelerations_moving(DeviceParticles& p, std::uint64_t, DeviceVectors& out, DeviceVectors& v,
                            gpu::DeviceBuffer<std::uint32_t>& index) override {
    GpuBuildTimes build;
    run_.rebuild_moving(p, v, index, &build);
    compute(build, nullptr, out);
    return true;
  }
  FieldTimes times() override {
    times_.plan = run_.plan_ms();
    times_.forces = forces_timer_.elapsed_ms();
    times_.transfer = run_.gather_ms() + scatter_timer_.elapsed_ms();
    return times_;
  }
  double potential(const DeviceParticles&) override {
    return field_gpu::near_field_potential<D, T>(run_.bodies(), run_.tree(), run_.eps2(), scratch_);
  }
  std::string potential_method() const override {
    return std::string("GPU, pair terms in ") + to_string(setup_.precision) + ", sums in float64";
  }

 private:
  // The kernel over the tree just built; accelerations into out, through `order` (null: as sorted).
  void compute(const GpuBuildTimes& build, const std::uint32_t* order, DeviceVectors& out) {
    times_.tree = build.total;  // the build reads its events itself (it waits for counts anyway)
    forces_timer_.start();
    run_.launch();
    forces_timer_.stop();
    scatter_timer_.start();
    field_gpu::scatter_accelerations<T>(run_.acc().data(), order, out);
    scatter_timer_.stop();
  }

  NearFieldRun<D, T> run_;
  gpu::Workspace scratch_;
  gpu::EventTimer forces_timer_, scatter_timer_;
};

// Input-order bodies of the kernel's precision from float64 particles (all-pairs kernels).
template <class T>
gpu::DeviceBuffer<Body<T>> all_pairs_bodies(const Particles& p, bool round_to_float) {
  std::vector<Body<T>> host(p.size());
  const std::vector<Body<double>> seen = bodies_as_seen(p, round_to_float ? Precision::f32 : Precision::f64);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = {T(seen[i].x), T(seen[i].y), T(seen[i].z), T(seen[i].m)};
  return gpu::DeviceBuffer<Body<T>>(host);
}

template <int D, class T>
class GpuAllPairs : public Evaluation {
 public:
  GpuAllPairs(const PerShape<GpuAllPairsFn>& drivers, const KernelInfo&, const Particles& p, const ForceSetup& s)
      : driver_(drivers.get<D, T>()) {
    bodies_ = all_pairs_bodies<T>(p, s.round_inputs_to_float);
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

// A simulation's all-pairs forces on device-resident particles: the bodies are packed from the
// float64 arrays every step (and, sub-sampled, every k-th of them as the sources, masses times k).
template <int D, class T>
class GpuAllPairsForces : public ForceField {
 public:
  GpuAllPairsForces(const PerShape<GpuAllPairsFn>& drivers, const KernelInfo&, const Particles& p, const FieldSetup& s)
      : ForceField(s.subsample > 1 ? FieldModel::subsampled : FieldModel::all_pairs, s),
        driver_(drivers.get<D, T>()), bodies_(p.size()), acc_(p.size()) {
    if (s.subsample > 1) sources_ = gpu::DeviceBuffer<Body<T>>(subsample_count(p.size(), s.subsample, 0));
    view_.bodies = bodies_.data();
    view_.acc = acc_.data();
    view_.n = static_cast<std::uint32_t>(p.size());
    view_.eps2 = detail::softening_squared<T>(s.softening);
    view_.guarded = !unguarded_is_safe<T>(s.softening, p.max_mass() * s.subsample);
    view_.workspace = &workspace_;
  }
  bool on_device() const override { return true; }
  void accelerations(const DeviceParticles& p, std::uint64_t step, DeviceVectors& out) override {
    const int k = setup_.subsample;
    pack_timer_.start();
    field_gpu::pack_bodies<T>(p, 0, 1, p.n, 1.0, bodies_.data());
    if (k > 1) {
      const std::size_t offset = step % std::uint64_t(k), count = subsample_count(p.n, k, offset);
      field_gpu::pack_bodies<T>(p, offset, k, count, double(k), sources_.data());
      view_.sources = sources_.data();
      view_.source_count = static_cast<std::uint32_t>(count);
    }
    pack_timer_.stop();
    forces_timer_.start();
    driver_(view_);
    forces_timer_.stop();
    scatter_timer_.start();
    field_gpu::scatter_accelerations<T>(acc_.data(), nullptr, out);
    scatter_timer_.stop();
  }
  FieldTimes times() override {
    times_.forces = forces_timer_.elapsed_ms();
    times_.transfer = pack_timer_.elapsed_ms() + scatter_timer_.elapsed_ms();
    return times_;
  }
  double potential(const DeviceParticles&) override {
    // Exact (every pair, true masses) also for a sub-sample: the bodies hold the unscaled masses.
    return field_gpu::allpairs_potential<D, T>(bodies_.data(), bodies_.size(), view_.eps2, scratch_);
  }
  std::string potential_method() const override {
    return std::string("GPU, pair terms in ") + to_string(setup_.precision) + ", sums in float64";
  }

 private:
  GpuAllPairsFn<T> driver_;
  gpu::DeviceBuffer<Body<T>> bodies_, sources_;
  gpu::DeviceBuffer<Acc4<T>> acc_;
  gpu::Workspace workspace_, scratch_;
  AllPairsView<T> view_;
  gpu::EventTimer pack_timer_, forces_timer_, scatter_timer_;
};
#endif

#if !defined(NF_HAVE_CUDA)
template <int, class>
class GpuNearField;
template <int, class>
class GpuAllPairs;
template <int, class>
class GpuNearFieldForces;
template <int, class>
class GpuAllPairsForces;
#endif

// A GPU family: the evaluation E and the force field F of its kernels, or the reason they cannot
// run here.
template <template <int, class> class E, template <int, class> class F, class Drivers>
KernelFamily gpu_family(Drivers drivers) {
  KernelFactory make = [drivers](const KernelInfo& k, const Particles& p, const ForceSetup& s) -> std::unique_ptr<Evaluation> {
    gpu::require("kernel " + k.name);
#if defined(NF_HAVE_CUDA)
    return detail::make_shaped<E>(p.dim, s.precision, drivers, k, p, s);
#else
    (void)p, (void)s;
    throw UsageError("kernel " + k.name + " needs a CUDA GPU: " + gpu::unavailable_reason());
#endif
  };
  ForceFieldFactory field = [drivers](const KernelInfo& k, const Particles& p, const FieldSetup& s) -> std::unique_ptr<ForceField> {
    gpu::require("kernel " + k.name);
#if defined(NF_HAVE_CUDA)
    return detail::make_shaped_as<ForceField, F>(p.dim, s.precision, drivers, k, p, s);
#else
    (void)p, (void)s;
    throw UsageError("kernel " + k.name + " needs a CUDA GPU: " + gpu::unavailable_reason());
#endif
  };
  return {std::move(make), std::move(field)};
}

}  // namespace

KernelFamily gpu_near_field(PerShape<GpuNearFieldFn> drivers) {
  return gpu_family<GpuNearField, GpuNearFieldForces>(drivers);
}
KernelFamily gpu_near_field_planned(PerShape<GpuNearFieldMakerFn> makers) {
  return gpu_family<GpuNearField, GpuNearFieldForces>(makers);
}
KernelFamily gpu_all_pairs(PerShape<GpuAllPairsFn> drivers) { return gpu_family<GpuAllPairs, GpuAllPairsForces>(drivers); }

}  // namespace nf
