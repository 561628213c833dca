// CPU parts of a spread evaluation (docs/design.md §15): each part is a CPU near-field method on
// its own and halo particles, read and written in place by evaluate_parts.
#include "distributed/host_spread_method.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/body.h"
#include "core/errors.h"
#include "core/timing.h"
#include "distributed/decomposition.h"

namespace nf {
namespace {

template <class T>
void add_records(unsigned char* acc, const std::vector<std::uint32_t>& at, const unsigned char* values) {
  Acc4<T>* a = reinterpret_cast<Acc4<T>*>(acc);
  const Acc4<T>* v = reinterpret_cast<const Acc4<T>*>(values);
  for (std::size_t i = 0; i < at.size(); ++i) {
    a[at[i]].x += v[i].x;
    a[at[i]].y += v[i].y;
    a[at[i]].z += v[i].z;
  }
}

// One CPU part as the exchange sees it: its method's sorted arrays and the buffers of its transfers.
class HostPartArrays final : public PartArrays {
 public:
  HostPartArrays(std::unique_ptr<HostPartMethod> m, const PartPlan& plan) : method_(std::move(m)), plan_(plan) {
    for (const PeerTransfer& t : plan.peers) {
      send_.emplace_back(t.send.size() * body_bytes());
      back_.emplace_back(t.send.size() * acc_bytes());
      // Halo bodies are only what the exchange delivers: NaN until then (as on the GPU).
      if (t.recv_count) std::memset(bodies() + t.recv_begin * body_bytes(), 0xFF, t.recv_count * body_bytes());
    }
  }
  std::size_t body_bytes() const override { return method_->body_bytes(); }
  std::size_t acc_bytes() const override { return method_->acc_bytes(); }
  unsigned char* bodies() override { return method_->sorted_bodies(); }
  unsigned char* acc() override { return method_->sorted_acc(); }
  void pack(std::size_t k) override {
    const std::size_t bb = body_bytes();
    const std::vector<std::uint32_t>& at = plan_.peers[k].send;
    for (std::size_t i = 0; i < at.size(); ++i) std::memcpy(send_[k].data() + i * bb, bodies() + at[i] * bb, bb);
  }
  unsigned char* send_buffer(std::size_t k) override { return send_[k].data(); }
  void compute() override { method_->evaluate(); }
  unsigned char* counterforce_buffer(std::size_t k) override { return back_[k].data(); }
  void add_counterforces(std::size_t k) override {
    if (method_->double_precision())
      add_records<double>(acc(), plan_.peers[k].send, back_[k].data());
    else
      add_records<float>(acc(), plan_.peers[k].send, back_[k].data());
  }
  HostPartMethod& method() { return *method_; }

 private:
  std::unique_ptr<HostPartMethod> method_;
  const PartPlan& plan_;
  std::vector<std::vector<unsigned char>> send_, back_;  // per peer
};

// Fails with a message when a part's tree does not have the planned layout.
void check_layout(int g, const Tree& t, const PartLayout& l, const BoxSet& boxes) {
  bool same = t.box_first.size() == l.first.size() && t.box_key.size() == l.boxes.size();
  for (std::size_t k = 0; same && k < l.boxes.size(); ++k) same = t.box_key[k] == boxes.key[l.boxes[k]];
  for (std::size_t k = 0; same && k < l.first.size(); ++k) same = t.box_first[k] == l.first[k];
  if (!same)
    throw std::logic_error("host spread method: the tree of part " + std::to_string(g) + " (" +
                           std::to_string(t.box_key.size()) + " boxes) differs from its planned layout (" +
                           std::to_string(l.boxes.size()) + " boxes)");
}

class HostSpreadMethod final : public ClusterMethod {
 public:
  HostSpreadMethod(const KernelInfo& k, const MethodSetup& s, const Spread& spread, HostCluster c)
      : ClusterMethod(ForceModel::near_field, s), kernel_(k), cross_(resolve_cross_pairs(k, spread.cross)),
        cluster_(std::move(c)) {}
  bool on_device() const override { return false; }

  void prepare(const Particles& p, std::uint64_t) override {
    if (cluster_.barrier) cluster_.barrier();
    const Stopwatch clock;
    parts_.clear();
    raw_.clear();
    dim_ = p.dim;
    n_ = p.size();
    MethodSetup ps = setup_;  // every part's tree over the whole input's domain
    ps.domain = setup_.domain ? *setup_.domain : default_domain(p);
    std::vector<std::uint32_t> particle_box;
    const BoxSet boxes = count_boxes(p, setup_.level, *ps.domain, &particle_box);
    plan_ = exchange_plan(boxes, decompose(boxes, cluster_.parts), cross_);
    rows_ = part_rows(particle_box, plan_, boxes.boxes());
    particle_box = {};
    parts_.resize(cluster_.parts);
    tree_ms_ = 0;
    for (int g = 0; g < cluster_.parts; ++g) {
      const bool here = std::find(cluster_.local.begin(), cluster_.local.end(), g) != cluster_.local.end();
      if (!here) rows_[g] = {};  // another process's part
      if (here && plan_.parts[g].layout.particles() > 0) {
        MethodSetup mine = ps;
        if (cross_ == CrossPairs::once) {  // own boxes first, then the halo above them
          mine.scope.computed_boxes = plan_.parts[g].layout.own_end;
          mine.scope.lower_neighbors = false;
        }
        const Particles selected = select_rows(p, rows_[g]);
        std::unique_ptr<HostPartMethod> m = kernel_.make_host_part(kernel_, mine, selected);
        m->prepare(selected);
        check_layout(g, m->tree(), plan_.parts[g].layout, boxes);
        tree_ms_ = std::max(tree_ms_, m->times().get("tree"));
        parts_[g] = std::make_unique<HostPartArrays>(std::move(m), plan_.parts[g]);
      }
      raw_.push_back(parts_[g].get());
    }
    transfer_ms_ = std::max(0.0, clock.ms() - tree_ms_);  // decomposition, selections, sorting bodies
  }

  void evaluate() override {
    if (cluster_.barrier) cluster_.barrier();  // every process starts together
    const Stopwatch clock;
    evaluate_parts(plan_, raw_, *cluster_.transport);
    total_ms_ = clock.ms();
    evaluated_ = true;
  }
  std::vector<double> accelerations() override {
    std::vector<double> out(n_ * dim_, std::nan(""));
    for_each_own([&](const std::vector<double>& a, std::size_t row, std::size_t part_row) {
      for (int c = 0; c < dim_; ++c) out[row * dim_ + c] = a[part_row * dim_ + c];
    });
    return out;
  }
  std::vector<std::uint32_t> rows_computed_here() override {
    std::vector<std::uint32_t> rows;
    for (std::size_t g = 0; g < parts_.size(); ++g)
      if (parts_[g]) {
        const Tree& t = parts_[g]->method().tree();
        const PartLayout& l = plan_.parts[g].layout;
        for (std::uint64_t s = l.own_first(); s < l.own_last(); ++s) rows.push_back(rows_[g][t.order[s]]);
      }
    std::sort(rows.begin(), rows.end());
    return rows;
  }
  void poison_output() override {
    for (auto& part : parts_)
      if (part) part->method().poison_output();
  }
  StageTimes times() override {
    double total = evaluated_ ? total_ms_ : 0.0, worst = 0, sum = 0;
    int busy = 0;
    for (auto& part : parts_)
      if (part) {
        const double ms = part->method().times().evaluate_ms;
        worst = std::max(worst, ms);
        sum += ms;
        ++busy;
      }
    if (cluster_.max_over_processes) {
      total = cluster_.max_over_processes(total);
      worst = cluster_.max_over_processes(worst);
    }
    return {{{"tree", tree_ms_}, {"transfer", transfer_ms_}},
            total,
            {{"kernel_max", worst}, {"kernel_mean", busy ? sum / busy : 0.0}, {"comm", std::max(0.0, total - worst)}}};
  }
  std::vector<Count> counts() override { return {{"halo_bodies", plan_.moved_bodies()}}; }

 private:
  // Calls f(the part's accelerations in its input order, row of the whole input, row of the part)
  // for every own particle of every local part.
  template <class F>
  void for_each_own(F&& f) {
    for (std::size_t g = 0; g < parts_.size(); ++g) {
      if (!parts_[g]) continue;
      HostPartMethod& m = parts_[g]->method();
      const std::vector<double> a = m.accelerations();
      const Tree& t = m.tree();
      const PartLayout& l = plan_.parts[g].layout;
      for (std::uint64_t s = l.own_first(); s < l.own_last(); ++s) f(a, rows_[g][t.order[s]], t.order[s]);
    }
  }

  const KernelInfo& kernel_;
  CrossPairs cross_;
  HostCluster cluster_;
  int dim_ = 2;
  std::size_t n_ = 0;
  ExchangePlan plan_;
  std::vector<std::vector<std::uint32_t>> rows_;  // per part: its input rows (this process's parts only)
  std::vector<std::unique_ptr<HostPartArrays>> parts_;  // null for other processes' parts and empty parts
  std::vector<PartArrays*> raw_;
  double tree_ms_ = 0, transfer_ms_ = 0, total_ms_ = 0;
  bool evaluated_ = false;
};

}  // namespace

std::unique_ptr<ClusterMethod> make_host_cluster_method(const KernelInfo& k, const MethodSetup& s, const Spread& spread,
                                                        HostCluster c) {
  if (s.count_interactions) throw UsageError("counting mode runs in one process");
  if (!k.make_host_part)
    throw UsageError(k.name + " cannot be spread over processes on the CPU: only the CPU near-field kernels can");
  if (c.parts < 1 || c.local.empty() || !c.transport)
    throw std::logic_error("make_host_cluster_method: parts, local parts and a transport are needed");
  return std::make_unique<HostSpreadMethod>(k, s, spread, std::move(c));
}

}  // namespace nf
