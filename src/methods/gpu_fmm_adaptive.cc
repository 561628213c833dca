// fmm-adaptive: the fast multipole method on the adaptive tree on the GPU (tree/adaptive.h,
// farfield/adaptive_gpu.h; docs/design.md §16, "Adaptive tree"). The compact tree at the deepest
// level K and the bodies in its order come from a GPU near-field part (bpb-lb's tree builder;
// its kernel never runs), the full tree with levels from tree/levels_gpu.h, then the kept levels.
// One evaluation: P2M (kept boxes that are not expanded, each at its own level), M2M, M2L (targets)
// and L2L (from split boxes), the leaves' near field (NEARFIELD_OVERLAP=on: beside them,
// methods/far_stream.h), then L2P (each leaf at its own level), with fmm's operators, tables and
// kernels.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/env.h"
#include "core/errors.h"
#include "core/timing.h"
#include "farfield/lists.h"
#include "farfield/m2l_thread_orders.h"
#include "farfield/order.h"
#include "methods/adaptive_method.h"
#include "methods/far_stream.h"
#include "methods/full_method.h"
#include "methods/memory_estimate.h"
#include "methods/part_method.h"
#include "methods/registry.h"
#include "methods/shaped.h"
#include "tree/adaptive.h"
#if defined(NF_HAVE_CUDA)
#include "farfield/adaptive_gpu.h"
#include "farfield/lists_gpu.h"
#include "farfield/m2l_gpu.h"
#include "farfield/passes_gpu.h"
#include "methods/potential_gpu.h"
#include "nearfield/nearfield_gpu.h"
#include "physics/interaction.h"
#include "tree/levels_gpu.h"
#endif

namespace nf {
#if defined(NF_HAVE_CUDA)
extern const GpuNearFieldKernels n3_rotate_kernels;  // nearfield/n3_rotate.cu
#endif
namespace {

#if defined(NF_HAVE_CUDA)
constexpr const char* kTreeKernel = "bpb-lb";  // the part whose tree builder and bodies this method uses

template <int D, class T>
class GpuFmmAdaptiveMethod final : public DeviceMethod {
 public:
  GpuFmmAdaptiveMethod(const KernelInfo&, const MethodSetup& s, const Particles& like)
      : DeviceMethod(ForceModel::fmm, adaptive_setup(s, like.dim, true)), terms_(farfield::terms<D>(setup_.order)) {
    check_adaptive_setup(setup_, "fmm-adaptive");
    const KernelInfo& tree = find_kernel(kTreeKernel);
    MethodSetup ns = near_part_setup(setup_);
    ns.scope.tree_only = true;  // its tree and bodies only: the leaves' near field is planned below
    check_setup(tree, ns, like);
    part_ = tree.make_part(tree, ns, like);
    eps2_ = T(setup_.softening * setup_.softening);
    // The leaves' mutual pairs with n3-rotate's kernel (docs/design.md §16, "Adaptive tree");
    // NEARFIELD_ADAPTIVE_NEAR=one-sided computes every near pair one-sided, as before (comparisons).
    if (env::choice("NEARFIELD_ADAPTIVE_NEAR", {"one-sided", "mutual"}) != "one-sided") {
      mutual_ = n3_rotate_kernels.get<D, T>()();
      view_.eps2 = eps2_;
      view_.guarded = !unguarded_is_safe<T>(setup_.softening, like.max_mass());
      view_.lower_neighbors = false;  // every pair through the half lists: no one-sided small-box path
      view_.workspace = &scratch_;
    }
  }
  std::string near_kernel() const override { return mutual_ ? "leaf-n3" : "leaf-direct"; }

  using DeviceMethod::prepare;
  void prepare(const DeviceParticles& p, std::uint64_t step) override {
    farfield::check_far_field_variables();  // before any work
    part_->prepare(p, step);
    build_far_field();
  }
  bool prepare_in_place(DeviceParticles& p, DeviceVectors& v, gpu::DeviceBuffer<std::uint32_t>& index,
                        std::uint64_t step) override {
    farfield::check_far_field_variables();
    const bool moved = part_->prepare_in_place(p, v, index, step);
    build_far_field();
    return moved;
  }

  std::vector<double> accelerations() override { return part_->accelerations(); }
  void accelerations(DeviceVectors& out) override { part_->accelerations(out); }
  void poison_output() override { part_->poison_output(); }
  StageTimes times() override {
    const double ms = evaluate_ms();  // waits
    const StageTimes tree = part_->times();
    // The part builds the tree only (no neighbor lists, no plan); "plan" is the near field's: the
    // one-sided items and the Newton-3 kernel's plan over the leaf graph.
    return {{{"tree", tree.get("tree")},
             {"lists", lists_timer_.elapsed_ms()},
             {"plan", planned_ ? plan_timer_.elapsed_ms() : 0.0},
             {"transfer", tree.get("transfer") + upload_ms()}},
            ms,
            {{"upward", far_ran_ ? upward_timer_.elapsed_ms() : 0.0},
             {"m2l", far_ran_ ? m2l_timer_.elapsed_ms() : 0.0},
             {"downward", far_ran_ ? l2l_timer_.elapsed_ms() + l2p_timer_.elapsed_ms() : 0.0},
             {"near", ran_ ? near_timer_.elapsed_ms() : 0.0}}};
  }
  std::vector<Count> counts() override {
    AdaptiveShape shape;
    shape.dim = D;
    for (const DeviceLevel& l : adaptive_.levels.level) {
      AdaptiveShape::Level out;
      out.key = download(l.key, l.boxes);
      out.flags = download(l.flags, l.boxes);
      const std::vector<std::uint32_t> first = download(l.first, l.boxes), last = download(l.last, l.boxes);
      for (std::uint32_t b = 0; b < l.boxes; ++b) out.count.push_back(last[b] - first[b]);
      shape.level.push_back(std::move(out));
    }
    return adaptive_method_counts(shape, setup_.order, lists_.links());
  }
  double device_potential() override {
    const DeviceTree& t = part_->device_tree();
    return potential_gpu::allpairs_potential<D, T>(static_cast<const Body<T>*>(part_->device_bodies()), t.n, eps2_,
                                                   scratch_);
  }
  std::string device_potential_method() const override {
    return std::string("GPU, pair terms in ") + to_string(setup_.precision) + ", sums in float64, every pair";
  }

 protected:
  void clear_output() override {
    const DeviceTree& t = part_->device_tree();
    if (t.n) gpu::fill_bytes(part_->device_acc(), 0, std::size_t(t.n) * sizeof(Acc4<T>));
    if (half_) gpu::fill_bytes(coeffs_.data(), 0, 2 * half_ * sizeof(T));
  }
  // The far field's upward pass, M2L and L2L, then the near field, then L2P; with
  // NEARFIELD_OVERLAP=on the first three on a stream of their own beside the near field
  // (methods/far_stream.h).
  void compute() override {
    const DeviceTree& t = part_->device_tree();
    ran_ = t.n > 0;
    far_ran_ = ran_ && levels_.leaf >= 2;
    if (!ran_) return;
    const auto* bodies = static_cast<const Body<T>*>(part_->device_bodies());
    auto* acc = static_cast<Acc4<T>*>(part_->device_acc());
    const DeviceLevels& a = adaptive_.levels;
    const int p = setup_.order, K = a.leaf;
    FarStream::Guard guard(far_);
    if (far_ran_) {
      far_.begin();
      const gpu::Stream* s = far_.stream();
      const gpu::StreamScope scope(s);
      upward_timer_.start(s);
      for (int l = K; l >= 2; --l) {
        const farfield::LeafGeometry g = farfield::LeafGeometry::of(geometry_.origin, geometry_.side[l]);
        // The kept boxes that are not expanded, a block each (the leaves hold about the leaf size).
        farfield::p2m<D, T>(bodies, a.level[l], g, p, M(l), 0, nullptr);
        if (l < K) shifts_.m2m(a.level[l + 1], a.level[l], M(l + 1), M(l));
      }
      upward_timer_.stop(s);
      m2l_timer_.start(s);
      m2l_.apply_levels(K, s, far_.high(), [&](int l) {
        return typename farfield::M2LOperators<D, T>::Level{&a.level[l], &a.level[l - 1], &lists_.level[l], M(l), L(l)};
      });
      m2l_timer_.stop(s);
      l2l_timer_.start(s);
      for (int l = 2; l < K; ++l) shifts_.l2l(a.level[l], a.level[l + 1], L(l), L(l + 1));
      l2l_timer_.stop(s);
    }
    near_timer_.start();
    if (mutual_ && view_.computed_boxes) {
      view_.bodies = bodies, view_.acc = acc;
      mutual_->launch(view_);
    }
    farfield::near_leaves<D, T>(bodies, adaptive_, eps2_, acc);
    near_timer_.stop();
    if (!far_ran_) return;
    far_.join();
    l2p_timer_.start();
    farfield::l2p_leaves<D, T>(bodies, t.n, adaptive_, geometry_, p, coeffs_.data() + half_, acc);
    l2p_timer_.stop();
  }

 private:
  template <class V>
  static std::vector<V> download(const V* p, std::size_t n) {
    std::vector<V> out(n);
    if (n) gpu::copy_to_host(out.data(), p, n * sizeof(V));
    return out;
  }
  // The run's memory check (methods/memory_estimate.h) estimated the kept boxes from the leaf size;
  // now that they are known, the expansions still to be allocated (and, on the first build, upper
  // bounds of the interaction lists, 6^d - 3^d entries a box, and of the mutual pairs' leaf graph)
  // are checked against the GPU's free memory before anything is allocated for them.
  void check_far_field_memory() const {
    if (coeffs_kept()) return;
    const double boxes = double(half_) / double(terms_);
    MemoryNeed need;
    need.gpu.push_back({"expansions (order " + std::to_string(setup_.order) + ", " +
                            std::to_string(std::uint64_t(boxes)) + " kept boxes)",
                        double(coeffs_wanted()) * sizeof(T)});
    // M2L a thread per target pads a level's moments to whole 16-byte loads (at most every kept box's).
    const int stride = farfield::thread_row_stride(int(terms_), int(sizeof(T)));
    if (setup_.order <= farfield::kWideMaxOrder<D, T> && stride != int(terms_))
      need.gpu.push_back({"M2L's padded moments", double(stride) * sizeof(T) * boxes});
    // Where the orders per offset apply to it (3D float p = 8), it copies a level's lists grouped
    // by order, with a count word a box (at most every kept box's).
    if (farfield::thread_lists_by_order(D, int(sizeof(T)), setup_.order))
      need.gpu.push_back({"M2L's lists by order", (4.0 * farfield::max_list_boxes(D) + 8.0) * boxes});
    if (coeffs_.size() == 0) {
      need.gpu.push_back({"interaction lists", 4.0 * farfield::max_list_boxes(D) * boxes});
      // The leaf graph of the mutual pairs (farfield/adaptive_gpu.h): two offsets and at most
      // (3^d - 1) / 2 half-list entries a leaf, the leaves at most the kept boxes, a quarter to spare.
      if (mutual_) need.gpu.push_back({"near-field leaf graph", 1.25 * 4.0 * (2 + (D == 3 ? 13 : 4)) * boxes});
    }
    check_memory(need, "fmm-adaptive's far field (checked once its tree is built)",
                 "its expansions were not allocated and the evaluation did not run");
  }
  // The expansions' buffer: kept while it holds M and L of every kept box, else grown with a
  // quarter to spare.
  bool coeffs_kept() const { return coeffs_.size() >= 2 * half_; }
  std::size_t coeffs_wanted() const { return 2 * half_ + half_ / 2; }
  T* M(int l) { return coeffs_.data() + start_[l]; }
  T* L(int l) { return coeffs_.data() + half_ + start_[l]; }

  void build_far_field() {
    const DeviceTree& t = part_->device_tree();
    check_float_resolution(t.domain, D, t.level, setup_.precision);
    lists_timer_.start();
    // NEARFIELD_BUILD_VERBOSE=1 prints each step of the build, the device synchronized after each
    // (which the timers' figures then include): where a first build's time goes (comparisons).
    const bool verbose = !env::value("NEARFIELD_BUILD_VERBOSE").empty();
    Stopwatch clock;
    auto step = [&](const char* what) {
      if (!verbose) return;
      gpu::synchronize();
      std::fprintf(stderr, "fmm-adaptive build: %-26s %8.3f ms\n", what, clock.ms());
      clock.restart();
    };
    step("(before)");
    levels_.build(t);
    step("full levels");
    const int K = levels_.leaf;
    if (K > farfield::kMaxAdaptiveLevel)
      throw UsageError("fmm-adaptive: level " + std::to_string(K) + " is deeper than its passes take (" +
                       std::to_string(farfield::kMaxAdaptiveLevel) + ")");
    start_.assign(std::size_t(K) + 2, 0);
    half_ = 0;
    if (t.n > 0) {
      adaptive_.build(levels_, leaf_size(setup_), t.n);
      step("kept levels");
      for (int l = 0; l <= K; ++l) start_[l + 1] = start_[l] + std::size_t(adaptive_.levels.level[l].boxes) * terms_;
      half_ = start_[K + 1];
      check_far_field_memory();
      step("memory check");
      lists_.build(adaptive_.levels);
      step("M2L lists");
    }
    if (!coeffs_kept()) coeffs_ = gpu::DeviceBuffer<T>(coeffs_wanted());
    step("expansions' buffer");
    m2l_.prepare(setup_.order, levels_, setup_.softening);  // the full levels' sides: the same boxes
    step("M2L tables and plan");
    shifts_.reset(setup_.order);
    step("shift tables");
    lists_timer_.stop();
    planned_ = false;  // set once the plan's timer has stopped (plan_near may throw)
    if (t.n > 0) {
      plan_timer_.start();
      adaptive_.plan_near(t.n, mutual_ != nullptr);
      step("one-sided items");
      plan_mutual(t.n);
      step("Newton-3 plan");
      plan_timer_.stop();
      planned_ = true;
    }
    geometry_ = farfield::AdaptiveGeometry{};
    for (int x = 0; x < 3; ++x) geometry_.origin[x] = t.domain.origin[x];
    for (int l = 0; l <= K && t.n > 0; ++l) {
      geometry_.side[l] = levels_.side(l);
      geometry_.inv_side[l] = 1.0 / levels_.side(l);
      geometry_.key[l] = adaptive_.levels.level[l].key;
      geometry_.start[l] = start_[l];
    }
  }

  // The leaf graph as a compact tree's half lists (farfield/adaptive_gpu.h), and the Newton-3
  // kernel's plan over it. Its chunks are sized by the largest leaf: the leaf size, or a box of the
  // deepest level if one holds more (coincident points, or a --level above the automatic one),
  // so that a big leaf takes chunks of 32 R targets with R as large as the kernel takes, and not
  // quadratically many small ones.
  void plan_mutual(std::uint32_t n) {
    if (!mutual_) return;
    view_.box_first = adaptive_.leaf_first();
    view_.near_offset = adaptive_.leaf_half_offset();
    view_.near_ids = adaptive_.leaf_half_ids();
    view_.nonempty_count = view_.computed_boxes = adaptive_.leaves();
    view_.n = n;
    view_.max_box_count = std::max(leaf_size(setup_), part_->device_tree().max_box_count);
    if (view_.computed_boxes) mutual_->plan(view_);
  }

  int terms_;
  std::unique_ptr<PartMethod> part_;
  std::unique_ptr<GpuNearFieldKernel<T>> mutual_;  // null: the near field all one-sided
  NearFieldView<T> view_;
  T eps2_ = 0;
  DeviceLevels levels_;
  farfield::DeviceAdaptive adaptive_;
  farfield::DeviceLists lists_;
  farfield::Shifts<D, T> shifts_;
  farfield::M2LOperators<D, T> m2l_;
  farfield::AdaptiveGeometry geometry_;
  std::vector<std::size_t> start_;
  std::size_t half_ = 0;
  gpu::DeviceBuffer<T> coeffs_;
  gpu::Workspace scratch_;
  bool ran_ = false, far_ran_ = false, planned_ = false;
  FarStream far_;  // the far field's own stream (NEARFIELD_OVERLAP=on) or the default one
  gpu::EventTimer lists_timer_, plan_timer_, upward_timer_, m2l_timer_, l2l_timer_, l2p_timer_, near_timer_;
};
#else
template <int D, class T>
class GpuFmmAdaptiveMethod;  // CUDA builds only
#endif

}  // namespace

MethodFamily gpu_fmm_adaptive() {
  MethodFactory make = [](const KernelInfo& k, const MethodSetup& s, const Particles& like) {
    return make_on_device<ForceMethod, GpuFmmAdaptiveMethod>(k.name, like.dim, s.precision, k, s, like);
  };
  return {std::move(make), {}};
}

}  // namespace nf
