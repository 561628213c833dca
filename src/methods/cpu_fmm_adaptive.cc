// cpu-fmm-adaptive: the fast multipole method on the adaptive tree (tree/adaptive.h; docs/design.md
// §16, "Adaptive tree") on the CPU, the reference of fmm-adaptive. The tree with levels of the
// compact tree at the deepest level K, the flags of tree/adaptive.h, cpu-fmm's Cartesian operators
// in the setup's precision, and the leaves' near field summed directly here (one-sided: a leaf's
// particles against every particle of the boxes adjacent to it at its level), OpenMP over boxes.
#include <algorithm>
#include <limits>

#include "core/bodies.h"
#include "farfield/expansion.h"
#include "farfield/lists.h"
#include "farfield/offset_derivatives.h"
#include "farfield/offset_order.h"
#include "farfield/order.h"
#include "methods/adaptive_method.h"
#include "methods/full_method.h"
#include "methods/registry.h"
#include "methods/shaped.h"
#include "physics/interaction.h"
#include "tree/adaptive.h"
#include "tree/levels.h"

namespace nf {
namespace {

template <int D, class T>
class CpuFmmAdaptiveMethod final : public HostMethod {
 public:
  CpuFmmAdaptiveMethod(const KernelInfo&, const MethodSetup& s, const Particles&)
      : HostMethod(ForceModel::fmm, adaptive_setup(s, D, false)), terms_(farfield::terms<D>(setup_.order)) {
    check_adaptive_setup(setup_, "cpu-fmm-adaptive");
  }
  std::string near_kernel() const override { return "leaf-direct"; }

  void prepare(const Particles& p, std::uint64_t) override {
    Stopwatch clock;
    farfield::check_offset_order_variables();  // before any work
    const Domain domain = setup_.domain ? *setup_.domain : default_domain(p);
    check_float_resolution(domain, D, setup_.level, setup_.precision);
    tree_ = build_tree(p, setup_.level, domain, false);
    tree_ms_ = clock.ms();
    clock.restart();
    levels_ = build_levels(tree_);
    flags_ = adaptive_flags(levels_, leaf_size(setup_));
    lists_ = farfield::build_interaction_lists(levels_);
    multipole_.resize(levels_.level.size());
    local_.resize(levels_.level.size());
    for (std::size_t l = 0; l < levels_.level.size(); ++l) {
      multipole_[l].assign(std::size_t(levels_.level[l].boxes()) * terms_, T(0));
      local_[l].assign(std::size_t(levels_.level[l].boxes()) * terms_, T(0));
    }
    lists_ms_ = clock.ms();
    clock.restart();
    bodies_ = make_bodies<T>(p, tree_.order.data());
    acc_.assign(p.size() * D, T(0));
    transfer_ms_ = clock.ms();
  }

  std::vector<double> accelerations() override {
    const Stopwatch clock;
    std::vector<double> out(acc_.size());
    for (std::size_t s = 0; s < tree_.order.size(); ++s)
      for (int a = 0; a < D; ++a) out[std::size_t(tree_.order[s]) * D + a] = double(acc_[s * D + a]);
    scatter_ms_ = clock.ms();
    return out;
  }
  void poison_output() override { std::fill(acc_.begin(), acc_.end(), std::numeric_limits<T>::quiet_NaN()); }
  StageTimes times() override {
    return {{{"tree", tree_ms_}, {"lists", lists_ms_}, {"transfer", transfer_ms_ + scatter_ms_}},
            evaluate_ms(),
            {{"upward", upward_ms_}, {"m2l", m2l_ms_}, {"downward", downward_ms_}, {"near", near_ms_}}};
  }
  std::vector<Count> counts() override {
    AdaptiveShape shape;
    shape.dim = D;
    for (std::size_t l = 0; l < levels_.level.size(); ++l) {
      const TreeLevel& level = levels_.level[l];
      std::vector<std::uint32_t> count(level.boxes());
      for (std::uint32_t b = 0; b < level.boxes(); ++b) count[b] = level.count(b);
      shape.level.push_back({level.key, std::move(count), flags_[l]});
    }
    std::uint64_t translations = 0;
    for (std::size_t l = 2; l < levels_.level.size(); ++l)
      for (std::uint32_t b = 0; b < levels_.level[l].boxes(); ++b)
        if (flags_[l][b] & adaptive::kTarget) translations += lists_[l].offset[b + 1] - lists_[l].offset[b];
    return adaptive_method_counts(shape, setup_.order, translations);
  }

 protected:
  void clear_output() override {
    std::fill(acc_.begin(), acc_.end(), T(0));
    for (auto& m : multipole_) std::fill(m.begin(), m.end(), T(0));
    for (auto& l : local_) std::fill(l.begin(), l.end(), T(0));
  }
  void compute() override {
    Stopwatch clock;
    upward();
    upward_ms_ = clock.ms();
    clock.restart();
    m2l();
    m2l_ms_ = clock.ms();
    clock.restart();
    downward();
    downward_ms_ = clock.ms();
    clock.restart();
    near();
    near_ms_ = clock.ms();
  }

 private:
  bool has(int l, std::uint32_t b, std::uint8_t f) const { return (flags_[l][b] & f) != 0; }
  static void from_centre(const Body<T>& body, const double (&c)[3], double h, T (&r)[D]) {
    const double x[3] = {double(body.x), double(body.y), double(body.z)};
    for (int a = 0; a < D; ++a) r[a] = T((x[a] - c[a]) / h);
  }
  void offset(int l, std::uint32_t b, const double (&from)[3], double unit, T (&r)[D]) const {
    double c[3];
    levels_.centre(l, levels_.level[l].key[b], c);
    for (int a = 0; a < D; ++a) r[a] = T((c[a] - from[a]) / unit);
  }

  // Every kept box of levels K..2: M2M from its children if expanded, else P2M from its particles.
  void upward() {
    const int p = setup_.order;
    for (int l = levels_.leaf; l >= 2; --l) {
      const TreeLevel& level = levels_.level[l];
      const double h = levels_.side(l);
#pragma omp parallel for schedule(dynamic, 16)
      for (long lb = 0; lb < long(level.boxes()); ++lb) {
        const std::uint32_t b = std::uint32_t(lb);
        if (!has(l, b, adaptive::kKept)) continue;
        double c[3];
        levels_.centre(l, level.key[b], c);
        T* M = &multipole_[l][std::size_t(b) * terms_];
        if (has(l, b, adaptive::kExpanded)) {
          for (std::uint32_t child = level.child[b]; child < level.child[b + 1]; ++child) {
            T s[D];
            offset(l + 1, child, c, h, s);
            farfield::m2m<D, T>(&multipole_[l + 1][std::size_t(child) * terms_], s, p, M, T(0.5));
          }
        } else {
          for (std::uint32_t i = level.first[b]; i < level.first[b + 1]; ++i) {
            T r[D];
            from_centre(bodies_[i], c, h, r);
            farfield::p2m<D, T>(bodies_[i].m, r, p, M);
          }
        }
      }
    }
  }

  // The targets' M2L (every source of a target's list is kept).
  void m2l() {
    const int p = setup_.order;
    const farfield::OffsetOrders orders = farfield::offset_orders(D, p);  // the order per offset length
    for (int l = 2; l <= levels_.leaf; ++l) {
      const TreeLevel& level = levels_.level[l];
      const NeighborLists& list = lists_[l];
      const double h = levels_.side(l);
      const T eps2 = T(setup_.softening * setup_.softening / (h * h));
      const farfield::OffsetDerivatives<D, T> table(p, eps2);  // the level's offsets
      bool all = true;                                         // every offset found in the table
#pragma omp parallel for schedule(dynamic, 16)
      for (long lb = 0; lb < long(level.boxes()); ++lb) {
        const std::uint32_t b = std::uint32_t(lb);
        if (!has(l, b, adaptive::kTarget)) continue;
        double c[3];
        levels_.centre(l, level.key[b], c);
        T* L = &local_[l][std::size_t(b) * terms_];
        for (std::uint32_t k = list.offset[b]; k < list.offset[b + 1]; ++k) {
          const std::uint32_t src = list.ids[k];
          double cs[3];
          levels_.centre(l, level.key[src], cs);
          if (!table.translate(orders, c, cs, h, &multipole_[l][std::size_t(src) * terms_], L)) {
#pragma omp atomic write
            all = false;
          }
        }
      }
      table.check(all);
    }
  }

  // L2L from the split boxes into their children (targets), L2P at the leaves of levels >= 2.
  void downward() {
    const int p = setup_.order;
    for (int l = 2; l <= levels_.leaf; ++l) {
      const TreeLevel& level = levels_.level[l];
      const double h = levels_.side(l);
      const T scale = T(1.0 / (h * h));
#pragma omp parallel for schedule(dynamic, 16)
      for (long lb = 0; lb < long(level.boxes()); ++lb) {
        const std::uint32_t b = std::uint32_t(lb);
        if (!has(l, b, adaptive::kTarget)) continue;
        double c[3];
        levels_.centre(l, level.key[b], c);
        const T* L = &local_[l][std::size_t(b) * terms_];
        if (has(l, b, adaptive::kSplit)) {
          for (std::uint32_t child = level.child[b]; child < level.child[b + 1]; ++child) {
            T s[D];
            offset(l + 1, child, c, h, s);
            farfield::l2l<D, T>(L, s, p, &local_[l + 1][std::size_t(child) * terms_], T(0.5));
          }
          continue;
        }
        for (std::uint32_t i = level.first[b]; i < level.first[b + 1]; ++i) {
          T y[D];
          from_centre(bodies_[i], c, h, y);
          T a[D] = {};
          farfield::l2p<D, T>(L, y, p, a);
          for (int k = 0; k < D; ++k) acc_[std::size_t(i) * D + k] += a[k] * scale;
        }
      }
    }
  }

  // Each leaf's particles against every particle of the boxes adjacent to it (and its own).
  void near() {
    const SoftenedGravity<D, T> g{T(setup_.softening * setup_.softening)};
    for (int l = 0; l <= levels_.leaf; ++l) {
      const TreeLevel& level = levels_.level[l];
#pragma omp parallel for schedule(dynamic, 4)
      for (long lb = 0; lb < long(level.boxes()); ++lb) {
        const std::uint32_t b = std::uint32_t(lb);
        if (!adaptive::leaf(flags_[l][b])) continue;
        for (std::uint32_t i = level.first[b]; i < level.first[b + 1]; ++i) {
          Acc4<T> a{};
          const auto sum = [&](std::uint32_t s) {
            for (std::uint32_t j = level.first[s]; j < level.first[s + 1]; ++j) g(bodies_[i], bodies_[j], a);
          };
          sum(b);
          for (std::uint32_t k = level.near.offset[b]; k < level.near.offset[b + 1]; ++k) sum(level.near.ids[k]);
          acc_[std::size_t(i) * D] += a.x;
          acc_[std::size_t(i) * D + 1] += a.y;
          if constexpr (D == 3) acc_[std::size_t(i) * D + 2] += a.z;
        }
      }
    }
  }

  int terms_;
  Tree tree_;
  TreeLevels levels_;
  std::vector<std::vector<std::uint8_t>> flags_;
  farfield::InteractionLists lists_;
  std::vector<Body<T>> bodies_;
  std::vector<std::vector<T>> multipole_, local_;
  std::vector<T> acc_;  // sorted order
  double tree_ms_ = 0, lists_ms_ = 0, transfer_ms_ = 0, scatter_ms_ = 0;
  double upward_ms_ = 0, m2l_ms_ = 0, downward_ms_ = 0, near_ms_ = 0;
};

}  // namespace

MethodFamily cpu_fmm_adaptive() {
  MethodFactory make = [](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_shaped<ForceMethod, CpuFmmAdaptiveMethod>(like.dim, s.precision, k, s, like);
  };
  return {std::move(make), {}};
}

}  // namespace nf
