// The CPU near-field family: a kernel over the CPU tree and the bodies sorted into its order. The
// same class is a part of an evaluation spread over processes (HostPartMethod, docs/design.md §15):
// the setup's BoxScope then says how many of its boxes it computes.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "core/bodies.h"
#include "methods/registry.h"
#include "methods/shaped.h"
#include "tree/tree.h"

namespace nf {
namespace {

template <int D, class T>
class CpuNearFieldMethod final : public HostPartMethod {
 public:
  CpuNearFieldMethod(const CpuNearFieldKernels& kernels, const KernelInfo& k, const MethodSetup& s)
      : HostPartMethod(ForceModel::near_field, s), kernel_(kernels.get<D, T>()), dense_(k.dense_tree()) {}

  void prepare(const Particles& p, std::uint64_t) override {
    Stopwatch clock;
    tree_ = build_tree(p, setup_.level, setup_.domain ? *setup_.domain : default_domain(p), dense_);
    tree_ms_ = clock.ms();
    clock.restart();
    bodies_ = make_bodies<T>(p, tree_.order.data());
    acc_.resize(p.size());
    view_ = {&tree_, bodies_.data(), acc_.data(), static_cast<T>(setup_.softening * setup_.softening), nullptr,
             &scratch_, setup_.scope.computed_boxes};
    transfer_ms_ = clock.ms();
  }
  std::vector<double> accelerations() override {
    const Stopwatch clock;
    std::vector<double> out = acceleration_rows<D>(acc_, tree_.order.data());
    scatter_ms_ = clock.ms();
    return out;
  }
  void poison_output() override {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::fill(acc_.begin(), acc_.end(), Acc4<T>{nan, nan, nan, nan});
  }
  StageTimes times() override {
    return {{{"tree", tree_ms_}, {"transfer", transfer_ms_ + scatter_ms_}}, evaluate_ms(), {{"near", evaluate_ms()}}};
  }
  unsigned long long counted_interactions() override { return counted_; }

  unsigned char* sorted_bodies() override { return reinterpret_cast<unsigned char*>(bodies_.data()); }
  unsigned char* sorted_acc() override { return reinterpret_cast<unsigned char*>(acc_.data()); }
  std::size_t body_bytes() const override { return sizeof(Body<T>); }
  std::size_t acc_bytes() const override { return sizeof(Acc4<T>); }
  bool double_precision() const override { return std::is_same_v<T, double>; }
  const Tree& tree() const override { return tree_; }

 protected:
  void clear_output() override { std::fill(acc_.begin(), acc_.end(), Acc4<T>{0, 0, 0, 0}); }
  void compute() override {
    unsigned long long count = 0;
    view_.counter = setup_.count_interactions ? &count : nullptr;
    kernel_(view_);
    counted_ = count;
  }

 private:
  CpuNearFieldFn<T> kernel_;
  bool dense_;
  Tree tree_;
  std::vector<Body<T>> bodies_;
  std::vector<Acc4<T>> acc_, scratch_;
  HostNearField<T> view_;
  unsigned long long counted_ = 0;
  double tree_ms_ = 0, transfer_ms_ = 0, scatter_ms_ = 0;
};

}  // namespace

MethodFamily cpu_near_field(const CpuNearFieldKernels& kernels) {
  MethodFactory make = [kernels](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_shaped<ForceMethod, CpuNearFieldMethod>(like.dim, s.precision, kernels, k, s);
  };
  HostPartFactory part = [kernels](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_shaped<HostPartMethod, CpuNearFieldMethod>(like.dim, s.precision, kernels, k, s);
  };
  return {std::move(make), {}, std::move(part)};
}

}  // namespace nf
