// fmm: the fast multipole method on the GPU (docs/design.md §16). A GPU near-field method (--near)
// builds the tree and gathers the bodies in its order; on that tree the levels and M2L lists are
// built on the GPU (tree/levels_gpu.h, farfield/lists_gpu.h), and the far field's passes
// (farfield/passes_gpu.h) run in the setup's precision, with cpu-fmm's operators and box units.
// One evaluation: P2M, M2M, M2L and L2L, the near-field method's evaluation (it zeroes the output
// and adds the near field), then L2P, which adds the far field into the same array
// (NEARFIELD_OVERLAP=on: the first four beside it, methods/far_stream.h).
#include <algorithm>

#include "core/errors.h"
#include "farfield/order.h"
#include "methods/far_stream.h"
#include "methods/part_method.h"
#include "methods/full_method.h"
#include "methods/registry.h"
#include "methods/shaped.h"
#if defined(NF_HAVE_CUDA)
#include "farfield/lists_gpu.h"
#include "farfield/m2l_gpu.h"
#include "farfield/passes_gpu.h"
#include "methods/potential_gpu.h"
#include "tree/levels_gpu.h"
#endif

namespace nf {
namespace {

#if defined(NF_HAVE_CUDA)
template <int D, class T>
class GpuFmmMethod final : public DeviceMethod {
 public:
  GpuFmmMethod(const KernelInfo& k, const MethodSetup& s, const Particles& like)
      : DeviceMethod(ForceModel::fmm, full_setup(s, like.dim, like.size())), terms_(farfield::terms<D>(setup_.order)) {
    const KernelInfo& near = find_kernel(full_near_kernel(k, setup_));
    if (!near.gpu() || !near.near_field() || !near.make_part)
      throw UsageError("--near " + near.name + ": fmm's near field is a GPU near-field kernel (" +
                       (!near.gpu() ? "that one runs on the CPU" : "that one is not a near-field kernel") + ")");
    const MethodSetup ns = near_part_setup(setup_);
    check_setup(near, ns, like);
    near_ = near.make_part(near, ns, like);
    near_name_ = near.name;
    eps2_ = T(setup_.softening * setup_.softening);
  }
  std::string near_kernel() const override { return near_name_; }

  using DeviceMethod::prepare;
  void prepare(const DeviceParticles& p, std::uint64_t step) override {
    farfield::check_far_field_variables();  // before any work
    near_->prepare(p, step);
    build_far_field();
  }
  bool prepare_in_place(DeviceParticles& p, DeviceVectors& v, gpu::DeviceBuffer<std::uint32_t>& index,
                        std::uint64_t step) override {
    farfield::check_far_field_variables();
    const bool moved = near_->prepare_in_place(p, v, index, step);
    build_far_field();
    return moved;
  }

  std::vector<double> accelerations() override { return near_->accelerations(); }
  void accelerations(DeviceVectors& out) override { near_->accelerations(out); }
  void poison_output() override { near_->poison_output(); }
  StageTimes times() override {
    const double ms = evaluate_ms();  // waits
    const StageTimes near = near_->times();
    return {{{"tree", near.get("tree")}, {"lists", lists_timer_.elapsed_ms()}, {"plan", near.get("plan")},
             {"transfer", near.get("transfer") + upload_ms()}},
            ms,
            {{"upward", far_ran_ ? upward_timer_.elapsed_ms() : 0.0},
             {"m2l", far_ran_ ? m2l_timer_.elapsed_ms() : 0.0},
             {"downward", far_ran_ ? l2l_timer_.elapsed_ms() + l2p_timer_.elapsed_ms() : 0.0},
             {"near", near.evaluate_ms}}};
  }
  std::vector<Count> counts() override {
    std::vector<std::uint64_t> boxes;
    for (const DeviceLevel& l : levels_.level) boxes.push_back(l.boxes);
    return full_method_counts(D, setup_.order, boxes, lists_.links(), near_->tree_box_key(), near_->tree_box_first());
  }
  double device_potential() override {
    const DeviceTree& t = near_->device_tree();
    return potential_gpu::allpairs_potential<D, T>(static_cast<const Body<T>*>(near_->device_bodies()), t.n, eps2_,
                                                   scratch_);
  }
  std::string device_potential_method() const override {
    return std::string("GPU, pair terms in ") + to_string(setup_.precision) + ", sums in float64, every pair";
  }

 protected:
  void clear_output() override {
    if (half_) gpu::fill_bytes(coeffs_.data(), 0, 2 * half_ * sizeof(T));
  }
  // The far field's upward pass, M2L and L2L, then the near field, then L2P; with
  // NEARFIELD_OVERLAP=on the first three on a stream of their own beside the near field
  // (methods/far_stream.h).
  void compute() override {
    const DeviceTree& t = near_->device_tree();
    const int p = setup_.order, K = levels_.leaf;
    far_ran_ = K >= 2 && t.n > 0;
    const auto* bodies = static_cast<const Body<T>*>(near_->device_bodies());
    FarStream::Guard guard(far_);
    if (far_ran_) {
      far_.begin();
      const gpu::Stream* s = far_.stream();
      const gpu::StreamScope scope(s);
      upward_timer_.start(s);
      farfield::p2m<D, T>(bodies, levels_.level[K], geometry_, p, M(K), t.n, &p2m_work_);
      for (int l = K - 1; l >= 2; --l) shifts_.m2m(levels_.level[l + 1], levels_.level[l], M(l + 1), M(l));
      upward_timer_.stop(s);
      m2l_timer_.start(s);
      m2l_.apply_levels(K, s, far_.high(), [&](int l) {
        return typename farfield::M2LOperators<D, T>::Level{&levels_.level[l], &levels_.level[l - 1], &lists_.level[l], M(l), L(l)};
      });
      m2l_timer_.stop(s);
      l2l_timer_.start(s);
      for (int l = 2; l < K; ++l) shifts_.l2l(levels_.level[l], levels_.level[l + 1], L(l), L(l + 1));
      l2l_timer_.stop(s);
    }
    near_->evaluate();  // zeroes the output, adds the near field
    if (!far_ran_) return;
    far_.join();
    auto* acc = static_cast<Acc4<T>*>(near_->device_acc());
    l2p_timer_.start();
    farfield::l2p<D, T>(bodies, t.particle_compact_box.data(), t.n, levels_.level[K], geometry_, p, L(K), acc);
    l2p_timer_.stop();
  }

 private:
  T* M(int l) { return coeffs_.data() + start_[l]; }
  T* L(int l) { return coeffs_.data() + half_ + start_[l]; }

  // The levels and lists of the near method's tree, the coefficient arrays (grown, never shrunk)
  // and each level's M2L tables.
  void build_far_field() {
    const DeviceTree& t = near_->device_tree();
    check_float_resolution(t.domain, D, t.level, setup_.precision);
    lists_timer_.start();
    levels_.build(t);
    lists_.build(levels_);
    const int K = levels_.leaf;
    start_.assign(std::size_t(K) + 2, 0);
    for (int l = 0; l <= K; ++l) start_[l + 1] = start_[l] + std::size_t(levels_.level[l].boxes) * terms_;
    half_ = start_[K + 1];
    if (coeffs_.size() < 2 * half_) coeffs_ = gpu::DeviceBuffer<T>(2 * half_ + half_ / 2);
    m2l_.prepare(setup_.order, levels_, setup_.softening);
    shifts_.reset(setup_.order);
    lists_timer_.stop();
    geometry_ = farfield::LeafGeometry::of(t.domain.origin, levels_.side(K));
  }

  int terms_;
  std::unique_ptr<PartMethod> near_;
  std::string near_name_;
  T eps2_ = 0;
  DeviceLevels levels_;
  farfield::DeviceLists lists_;
  farfield::Shifts<D, T> shifts_;     // M2M and L2L's tables
  farfield::M2LOperators<D, T> m2l_;  // M2L's derivative and operator tables, and its kernel
  farfield::LeafGeometry geometry_;
  std::vector<std::size_t> start_;  // level l's coefficients from start_[l] (multipoles; locals from half_ on)
  std::size_t half_ = 0;
  gpu::DeviceBuffer<T> coeffs_;
  gpu::Workspace scratch_;
  gpu::Workspace p2m_work_;  // P2M's list of larger boxes
  bool far_ran_ = false;  // the last evaluation had a far field (leaf level >= 2, particles)
  FarStream far_;  // the far field's own stream (NEARFIELD_OVERLAP=on) or the default one
  gpu::EventTimer lists_timer_, upward_timer_, m2l_timer_, l2l_timer_, l2p_timer_;
};
#else
template <int D, class T>
class GpuFmmMethod;  // CUDA builds only
#endif

}  // namespace

MethodFamily gpu_fmm() {
  MethodFactory make = [](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_on_device<ForceMethod, GpuFmmMethod>(k.name, like.dim, s.precision, k, s, like);
  };
  return {std::move(make), {}};
}

}  // namespace nf
