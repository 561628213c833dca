// cpu-fmm: the fast multipole method on the CPU (docs/design.md §16), the reference of the far
// field. The tree with levels (tree/levels.h) of the leaf level's compact tree, the M2L lists
// (farfield/lists.h), the Cartesian operators of farfield/expansion.h in the setup's precision,
// OpenMP over the boxes of a level; the near field by a registered CPU near-field kernel on the
// same boxes, its forces added to the far field's. Every expansion is kept in units of its box's
// side (farfield/expansion.h: "Units"), so float works at any depth.
#include <algorithm>
#include <limits>

#include "core/bodies.h"
#include "core/errors.h"
#include "farfield/expansion.h"
#include "farfield/lists.h"
#include "farfield/offset_derivatives.h"
#include "farfield/offset_order.h"
#include "farfield/order.h"
#include "methods/full_method.h"
#include "methods/registry.h"
#include "methods/shaped.h"
#include "tree/levels.h"

namespace nf {
namespace {

template <int D, class T>
class CpuFmmMethod final : public HostMethod {
 public:
  CpuFmmMethod(const KernelInfo& k, const MethodSetup& s, const Particles& like)
      : HostMethod(ForceModel::fmm, full_setup(s, like.dim, like.size())), terms_(farfield::terms<D>(setup_.order)) {
    const KernelInfo& near = find_kernel(full_near_kernel(k, setup_));
    if (near.gpu() || !near.near_field())
      throw UsageError("--near " + near.name + ": cpu-fmm's near field is a CPU near-field kernel (" +
                       (near.gpu() ? "that one runs on the GPU" : "that one is not a near-field kernel") + ")");
    const MethodSetup ns = near_part_setup(setup_);
    near_ = make_method(near, ns, like);
    near_name_ = near.name;
  }
  std::string near_kernel() const override { return near_name_; }

  void prepare(const Particles& p, std::uint64_t step) override {
    Stopwatch clock;
    farfield::check_offset_order_variables();  // before any work
    const Domain domain = setup_.domain ? *setup_.domain : default_domain(p);
    check_float_resolution(domain, D, setup_.level, setup_.precision);
    tree_ = build_tree(p, setup_.level, domain, false);
    tree_ms_ = clock.ms();
    clock.restart();
    levels_ = build_levels(tree_);
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
    near_->prepare(p, step);
  }

  std::vector<double> accelerations() override {
    const Stopwatch clock;
    std::vector<double> out = near_->accelerations();  // input order
    for (std::size_t s = 0; s < tree_.order.size(); ++s)
      for (int a = 0; a < D; ++a) out[std::size_t(tree_.order[s]) * D + a] += double(acc_[s * D + a]);
    scatter_ms_ = clock.ms();
    return out;
  }
  void poison_output() override {
    std::fill(acc_.begin(), acc_.end(), std::numeric_limits<T>::quiet_NaN());
    near_->poison_output();
  }
  StageTimes times() override {
    const StageTimes near = near_->times();
    return {{{"tree", tree_ms_ + near.get("tree")}, {"lists", lists_ms_}, {"transfer", transfer_ms_ + scatter_ms_}},
            evaluate_ms(),
            {{"upward", upward_ms_}, {"m2l", m2l_ms_}, {"downward", downward_ms_}, {"near", near.evaluate_ms}}};
  }
  std::vector<Count> counts() override {
    std::vector<std::uint64_t> boxes;
    std::uint64_t translations = 0;
    for (std::size_t l = 0; l < levels_.level.size(); ++l) {
      boxes.push_back(levels_.level[l].boxes());
      translations += lists_[l].ids.size();
    }
    return full_method_counts(D, setup_.order, boxes, translations, tree_.box_key, tree_.box_first);
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
    near_->evaluate();  // the near field, added to these forces in accelerations()
  }

 private:
  // A body's offset from centre c in units of h.
  static void from_centre(const Body<T>& body, const double (&c)[3], double h, T (&r)[D]) {
    const double x[3] = {double(body.x), double(body.y), double(body.z)};
    for (int a = 0; a < D; ++a) r[a] = T((x[a] - c[a]) / h);
  }
  // Offset of box b's centre at level l from `from`, in units of `unit` (T, for the operators).
  void offset(int l, std::uint32_t b, const double (&from)[3], double unit, T (&r)[D]) const {
    double c[3];
    levels_.centre(l, levels_.level[l].key[b], c);
    for (int a = 0; a < D; ++a) r[a] = T((c[a] - from[a]) / unit);
  }

  // P2M at the leaf level, then M2M up to level 2 (levels 0 and 1 have no far field).
  void upward() {
    const int p = setup_.order, K = levels_.leaf;
    if (K < 2) return;
    {
      const TreeLevel& leaf = levels_.level[K];
      const double h = levels_.side(K);
#pragma omp parallel for schedule(dynamic, 16)
      for (long lb = 0; lb < long(leaf.boxes()); ++lb) {
        const std::uint32_t b = std::uint32_t(lb);
        double c[3];
        levels_.centre(K, leaf.key[b], c);
        T* M = &multipole_[K][std::size_t(b) * terms_];
        for (std::uint32_t i = leaf.first[b]; i < leaf.first[b + 1]; ++i) {
          T r[D];
          from_centre(bodies_[i], c, h, r);
          farfield::p2m<D, T>(bodies_[i].m, r, p, M);
        }
      }
    }
    for (int l = K - 1; l >= 2; --l) {
      const TreeLevel& level = levels_.level[l];
      const double h = levels_.side(l);
#pragma omp parallel for schedule(dynamic, 16)
      for (long lb = 0; lb < long(level.boxes()); ++lb) {
        const std::uint32_t b = std::uint32_t(lb);
        double c[3];
        levels_.centre(l, level.key[b], c);
        T* M = &multipole_[l][std::size_t(b) * terms_];
        for (std::uint32_t child = level.child[b]; child < level.child[b + 1]; ++child) {
          T s[D];
          offset(l + 1, child, c, h, s);
          farfield::m2m<D, T>(&multipole_[l + 1][std::size_t(child) * terms_], s, p, M, T(0.5));
        }
      }
    }
  }

  // Every level's M2L: each box's local coefficients from the multipoles of its interaction list.
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

  // L2L down to the leaf level, then L2P into the particles' forces (sorted order).
  void downward() {
    const int p = setup_.order, K = levels_.leaf;
    if (K < 2) return;
    for (int l = 2; l < K; ++l) {
      const TreeLevel& level = levels_.level[l];
      const double h = levels_.side(l);
#pragma omp parallel for schedule(dynamic, 16)
      for (long lb = 0; lb < long(level.boxes()); ++lb) {
        const std::uint32_t b = std::uint32_t(lb);
        double c[3];
        levels_.centre(l, level.key[b], c);
        const T* L = &local_[l][std::size_t(b) * terms_];
        for (std::uint32_t child = level.child[b]; child < level.child[b + 1]; ++child) {
          T s[D];
          offset(l + 1, child, c, h, s);
          farfield::l2l<D, T>(L, s, p, &local_[l + 1][std::size_t(child) * terms_], T(0.5));
        }
      }
    }
    const TreeLevel& leaf = levels_.level[K];
    const double h = levels_.side(K);
    const T scale = T(1.0 / (h * h));  // the acceleration of an expansion in box units
#pragma omp parallel for schedule(dynamic, 16)
    for (long lb = 0; lb < long(leaf.boxes()); ++lb) {
      const std::uint32_t b = std::uint32_t(lb);
      double c[3];
      levels_.centre(K, leaf.key[b], c);
      const T* L = &local_[K][std::size_t(b) * terms_];
      for (std::uint32_t i = leaf.first[b]; i < leaf.first[b + 1]; ++i) {
        T y[D];
        from_centre(bodies_[i], c, h, y);
        T a[D] = {};
        farfield::l2p<D, T>(L, y, p, a);
        for (int k = 0; k < D; ++k) acc_[std::size_t(i) * D + k] += a[k] * scale;
      }
    }
  }

  int terms_;
  std::unique_ptr<ForceMethod> near_;
  std::string near_name_;
  Tree tree_;
  TreeLevels levels_;
  farfield::InteractionLists lists_;
  std::vector<Body<T>> bodies_;
  std::vector<std::vector<T>> multipole_, local_;  // per level, terms_ per box, in box units
  std::vector<T> acc_;                             // the far field, sorted order
  double tree_ms_ = 0, lists_ms_ = 0, transfer_ms_ = 0, scatter_ms_ = 0;
  double upward_ms_ = 0, m2l_ms_ = 0, downward_ms_ = 0;
};

}  // namespace

MethodFamily cpu_fmm() {
  MethodFactory make = [](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_shaped<ForceMethod, CpuFmmMethod>(like.dim, s.precision, k, s, like);
  };
  return {std::move(make), {}};
}

}  // namespace nf
