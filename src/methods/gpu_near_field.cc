// The GPU near-field family: the GPU tree of the positions, the bodies gathered into its order, a
// kernel (with its plan) over them. Host code only: the kernels are launched by their drivers.
#include <algorithm>
#include <type_traits>

#include "core/errors.h"
#include "methods/registry.h"
#include "methods/shaped.h"
#if defined(NF_HAVE_CUDA)
#include "core/bodies.h"
#include "core/device_bodies.h"
#include "methods/potential_gpu.h"
#include "methods/reorder_gpu.h"
#include "physics/interaction.h"
#include "tree/tree_gpu.h"
#endif

namespace nf {
namespace {

#if defined(NF_HAVE_CUDA)
// Also the PartMethod of a distributed evaluation: the setup's BoxScope says which boxes it
// computes and which launch choices it takes from the whole input.
template <int D, class T>
class GpuNearFieldMethod final : public PartMethod {
 public:
  GpuNearFieldMethod(const GpuNearFieldKernels& kernels, const KernelInfo& k, const MethodSetup& s,
                     const Particles& like)
      : PartMethod(ForceModel::near_field, s), kernel_(kernels.get<D, T>()()), newton3_(k.newton3()),
        // A tree-only part builds the compact layout without lists (its owner reads nothing else).
        builder_(D, s.level, like.size(), k.dense_tree() && !s.scope.tree_only, !s.scope.tree_only),
        bodies_(like.size()), acc_(like.size()) {
    if (s.count_interactions) counter_ = gpu::DeviceBuffer<unsigned long long>(1);
    view_.eps2 = static_cast<T>(s.softening * s.softening);
    view_.guarded = !unguarded_is_safe<T>(s.softening, s.scope.max_mass > 0 ? s.scope.max_mass : like.max_mass());
    view_.counter = counter_.data();
    view_.workspace = &workspace_;
  }

  using DeviceMethod::prepare;
  void prepare(const DeviceParticles& p, std::uint64_t) override {
    builder_.build(p, setup_.domain ? &*setup_.domain : nullptr, &build_);
    const DeviceTree& t = builder_.tree();
    gather_timer_.start();
    gather_bodies<T>(p, t.order.data(), t.n, bodies_.data());
    gather_timer_.stop();
    in_place_ = false;
    refresh_and_plan();
  }
  bool prepare_in_place(DeviceParticles& p, DeviceVectors& v, gpu::DeviceBuffer<std::uint32_t>& index,
                        std::uint64_t) override {
    builder_.build(p, setup_.domain ? &*setup_.domain : nullptr, &build_);
    gather_timer_.start();
    reorder_gpu::reorder_state<T>(builder_.tree().order.data(), p, v, index, spare_, bodies_.data());
    gather_timer_.stop();
    in_place_ = true;
    refresh_and_plan();
    return true;
  }

  std::vector<double> accelerations() override {
    return acceleration_rows<D>(acc_.download(), in_place_ ? nullptr : sorted_order().data());
  }
  void accelerations(DeviceVectors& out) override {
    scatter_timer_.start();
    scatter_accelerations<T>(acc_.data(), in_place_ ? nullptr : builder_.tree().order.data(), out);
    scatter_timer_.stop();
    scattered_ = true;
  }
  StateOrderAcc state_order_acc() override {
    if (!in_place_) return {};
    return {acc_.data(), std::is_same_v<T, double>};
  }
  void poison_output() override { acc_.fill(0xFF); }
  StageTimes times() override {
    const double transfer =
        upload_ms() + gather_timer_.elapsed_ms() + (scattered_ ? scatter_timer_.elapsed_ms() : 0.0);
    const double ms = evaluate_ms();
    const double plan = setup_.scope.tree_only ? 0.0 : plan_timer_.elapsed_ms();
    return {{{"tree", build_.total}, {"plan", plan}, {"transfer", transfer}}, ms, {{"near", ms}}};
  }
  unsigned long long counted_interactions() override { return counter_.size() ? counter_.download()[0] : 0; }
  double device_potential() override {
    if (setup_.scope.tree_only) throw std::logic_error("a tree-only near-field part has no neighbor lists to sum over");
    return potential_gpu::near_field_potential<D, T>(bodies_.data(), builder_.tree(), view_.eps2, scratch_);
  }
  std::string device_potential_method() const override {
    return std::string("GPU, pair terms in ") + to_string(setup_.precision) + ", sums in float64";
  }

  // PartMethod
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
  const std::vector<std::uint32_t>& sorted_order() override {
    if (order_.size() != builder_.tree().n) {
      const DeviceTree& t = builder_.tree();
      order_.resize(t.n);
      if (t.n) gpu::copy_to_host(order_.data(), t.order.data(), t.n * sizeof(std::uint32_t));
    }
    return order_;
  }
  const DeviceTree& device_tree() const override { return builder_.tree(); }
  std::vector<double> sorted_accelerations() override {
    return acceleration_rows<D>(acc_.download());
  }

 protected:
  void clear_output() override { acc_.fill(0); }
  void compute() override {
    if (setup_.scope.tree_only) throw std::logic_error("a tree-only near-field part (BoxScope::tree_only) is not evaluated");
    if (view_.counter) counter_.fill(0);
    view_.acc_zero = true;  // clear_output just zeroed it: the kernel is the evaluation's only stage
    kernel_->launch(view_);
  }

 private:
  // The view of the last build (the builder may have grown its buffers), and the kernel's plan.
  void refresh_and_plan() {
    const DeviceTree& t = builder_.tree();
    order_.clear();
    scattered_ = false;
    view_.bodies = bodies_.data();
    view_.acc = acc_.data();
    view_.box_key = t.box_key.data();
    view_.box_first = t.box_first.data();
    view_.particle_compact_box = t.particle_compact_box.data();
    view_.near_full_offset = t.near_full_offset.data();
    view_.near_full_ids = t.near_full_ids.data();
    view_.near_offset = newton3_ ? t.near_half_offset.data() : t.near_full_offset.data();
    view_.near_ids = newton3_ ? t.near_half_ids.data() : t.near_full_ids.data();
    if (t.dense) {
      view_.box_start = t.box_start.data();
      view_.particle_box = t.particle_box.data();
      view_.nonempty = t.nonempty.data();
      view_.neighbor_offset = newton3_ ? t.half_offset.data() : t.full_offset.data();
      view_.neighbor_ids = newton3_ ? t.half_ids.data() : t.full_ids.data();
    }
    view_.n = t.n;
    view_.nonempty_count = t.nonempty_count;
    view_.computed_boxes = std::min(t.nonempty_count, setup_.scope.computed_boxes);
    view_.lower_neighbors = setup_.scope.lower_neighbors;
    view_.max_box_count = std::max(t.max_box_count, setup_.scope.max_box_count);
    if (setup_.scope.tree_only) return;  // no lists, no plan: its owner reads the tree and bodies only
    plan_timer_.start();
    kernel_->plan(view_);
    plan_timer_.stop();
  }

  std::unique_ptr<GpuNearFieldKernel<T>> kernel_;
  bool newton3_;
  GpuTreeBuilder builder_;
  GpuBuildTimes build_;
  gpu::DeviceBuffer<Body<T>> bodies_;
  gpu::DeviceBuffer<Acc4<T>> acc_;
  gpu::DeviceBuffer<unsigned long long> counter_;
  gpu::Workspace workspace_, scratch_;
  NearFieldView<T> view_;
  gpu::EventTimer gather_timer_, plan_timer_, scatter_timer_;
  reorder_gpu::StateSpare spare_;   // prepare_in_place's second set of state arrays
  std::vector<std::uint32_t> order_;  // the tree's order on the host, downloaded when first asked for
  bool in_place_ = false, scattered_ = false;
};
#else
template <int D, class T>
class GpuNearFieldMethod;  // CUDA builds only
#endif

}  // namespace

MethodFamily gpu_near_field(const GpuNearFieldKernels& kernels) {
  MethodFactory make = [kernels](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_on_device<ForceMethod, GpuNearFieldMethod>(k.name, like.dim, s.precision, kernels, k, s, like);
  };
  PartFactory part = [kernels](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_on_device<PartMethod, GpuNearFieldMethod>(k.name, like.dim, s.precision, kernels, k, s, like);
  };
  return {std::move(make), std::move(part)};
}

}  // namespace nf
