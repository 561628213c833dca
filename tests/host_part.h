#pragma once
// One part of a multi-GPU evaluation in host memory, for the CPU tests of the exchange
// (test_distributed_decomposition: all parts in one process over the loopback transport;
// test_mpi: one part per MPI process): the part's own tree and a float64 reference kernel,
// driven by evaluate_parts.
#include <cmath>
#include <memory>
#include <vector>

#include "core/body.h"
#include "tree/domain.h"
#include "physics/interaction.h"
#include "distributed/decomposition.h"
#include "distributed/exchange.h"
#include "tree/tree.h"

namespace nf::test {

// One part in host memory with a float64 reference kernel over its own tree: full lists over
// every box (CrossPairs::twice), or half lists over the own boxes only, each pair applied to both
// particles (CrossPairs::once). Halo bodies start as NaN: only the exchange can make them right.
class HostPart final : public PartArrays {
 public:
  HostPart(const Particles& part, int level, const Domain& dom, const PartPlan& plan, CrossPairs cross, double eps)
      : tree_(build_tree(part, level, dom, false)), plan_(plan), cross_(cross), g_{eps * eps} {
    const double nan = std::nan("");
    bodies_.resize(part.size());
    for (std::size_t s = 0; s < part.size(); ++s) {
      const std::uint32_t r = tree_.order[s];
      const bool own = s >= plan.layout.own_first() && s < plan.layout.own_last();
      bodies_[s] = own ? Body<double>{part.x[r], part.y[r], part.dim == 3 ? part.z[r] : 0.0, part.m[r]}
                       : Body<double>{nan, nan, nan, nan};
    }
    acc_.assign(part.size(), Acc4<double>{nan, nan, nan, nan});
    for (const PeerTransfer& p : plan.peers) {
      send_.emplace_back(p.send.size());
      back_.emplace_back(p.send.size());
    }
  }
  std::size_t body_bytes() const override { return sizeof(Body<double>); }
  std::size_t acc_bytes() const override { return sizeof(Acc4<double>); }
  unsigned char* bodies() override { return reinterpret_cast<unsigned char*>(bodies_.data()); }
  unsigned char* acc() override { return reinterpret_cast<unsigned char*>(acc_.data()); }
  void pack(std::size_t k) override {
    for (std::size_t i = 0; i < plan_.peers[k].send.size(); ++i) send_[k][i] = bodies_[plan_.peers[k].send[i]];
  }
  unsigned char* send_buffer(std::size_t k) override { return reinterpret_cast<unsigned char*>(send_[k].data()); }
  unsigned char* counterforce_buffer(std::size_t k) override {
    return reinterpret_cast<unsigned char*>(back_[k].data());
  }
  void add_counterforces(std::size_t k) override {
    for (std::size_t i = 0; i < plan_.peers[k].send.size(); ++i) {
      Acc4<double>& a = acc_[plan_.peers[k].send[i]];
      a.x += back_[k][i].x, a.y += back_[k][i].y, a.z += back_[k][i].z;
    }
  }
  void compute() override {
    const Tree& t = tree_;
    if (cross_ == CrossPairs::twice) {
      for (std::uint32_t b = 0; b < t.nonempty_boxes(); ++b)
        for (std::uint32_t i = t.box_first[b]; i < t.box_first[b + 1]; ++i) {
          Acc4<double> a{0, 0, 0, 0};
          for (std::uint32_t j = t.box_first[b]; j < t.box_first[b + 1]; ++j)
            if (j != i) g_(bodies_[i], bodies_[j], a);
          for (std::uint32_t l = t.near_full.offset[b]; l < t.near_full.offset[b + 1]; ++l)
            for (std::uint32_t j = t.box_first[t.near_full.ids[l]]; j < t.box_first[t.near_full.ids[l] + 1]; ++j)
              g_(bodies_[i], bodies_[j], a);
          acc_[i] = a;
        }
      return;
    }
    std::fill(acc_.begin(), acc_.end(), Acc4<double>{0, 0, 0, 0});
    for (std::uint32_t b = plan_.layout.own_begin; b < plan_.layout.own_end; ++b) {
      for (std::uint32_t i = t.box_first[b]; i < t.box_first[b + 1]; ++i)
        for (std::uint32_t j = i + 1; j < t.box_first[b + 1]; ++j) g_.mutual(bodies_[i], bodies_[j], acc_[i], acc_[j]);
      for (std::uint32_t l = t.near_half.offset[b]; l < t.near_half.offset[b + 1]; ++l)
        for (std::uint32_t i = t.box_first[b]; i < t.box_first[b + 1]; ++i)
          for (std::uint32_t j = t.box_first[t.near_half.ids[l]]; j < t.box_first[t.near_half.ids[l] + 1]; ++j)
            g_.mutual(bodies_[i], bodies_[j], acc_[i], acc_[j]);
    }
  }
  // Own particles' accelerations into `out` (input order of the whole input).
  void collect(const std::vector<std::uint32_t>& rows, std::vector<double>& out, int dim) const {
    for (std::uint64_t s = plan_.layout.own_first(); s < plan_.layout.own_last(); ++s) {
      const std::size_t r = rows[tree_.order[s]];
      out[r * dim] = acc_[s].x;
      out[r * dim + 1] = acc_[s].y;
      if (dim == 3) out[r * dim + 2] = acc_[s].z;
    }
  }

 private:
  Tree tree_;
  const PartPlan& plan_;
  CrossPairs cross_;
  SoftenedGravity<3, double> g_;  // 3D arithmetic: z = 0 in 2D adds nothing
  std::vector<Body<double>> bodies_;
  std::vector<Acc4<double>> acc_;
  std::vector<std::vector<Body<double>>> send_;
  std::vector<std::vector<Acc4<double>>> back_;
};

//! The evaluation of `p` at `level` split into `parts` over transport `t`, driving the parts in
//! `local` (every part when empty): accelerations in input order for the local parts' own
//! particles, NaN for the rest. `messages` receives how many messages the plan sends (twice
//! that with counterforces).
inline std::vector<double> evaluate_split(const Particles& p, int level, int parts, CrossPairs cross, Transport& t,
                                          std::vector<int> local = {}, std::size_t* messages = nullptr) {
  const Domain dom = default_domain(p);
  std::vector<std::uint32_t> particle_box;
  const BoxSet b = count_boxes(p, level, dom, &particle_box);
  const Decomposition d = decompose(b, parts);
  const ExchangePlan plan = exchange_plan(b, d, cross);
  const auto rows = part_rows(particle_box, plan, b.boxes());
  if (local.empty())
    for (int g = 0; g < parts; ++g) local.push_back(g);
  std::vector<std::unique_ptr<HostPart>> devices(parts);
  std::vector<PartArrays*> raw(parts, nullptr);
  for (int g : local) {
    devices[g] = std::make_unique<HostPart>(select_rows(p, rows[g]), level, dom, plan.parts[g], cross, 1e-3);
    raw[g] = devices[g].get();
  }
  evaluate_parts(plan, raw, t);
  if (messages) {
    *messages = 0;
    for (const PartPlan& pp : plan.parts)
      for (const PeerTransfer& tr : pp.peers) *messages += tr.send.empty() ? 0 : cross == CrossPairs::once ? 2 : 1;
  }
  std::vector<double> out(p.size() * p.dim, std::nan(""));
  for (int g : local) devices[g]->collect(rows[g], out, p.dim);
  return out;
}

}  // namespace nf::test
