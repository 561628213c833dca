#include "distributed/spread_method.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/env.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/timing.h"
#include "distributed/decomposition.h"
#include "distributed/exchange.h"
#include "distributed/nccl_transport.h"
#include "distributed/process_group.h"
#include "measure/order_search.h"

#if defined(NF_HAVE_CUDA)
#include "distributed/halo_gpu.h"
#endif

namespace nf {

CrossPairs resolve_cross_pairs(const KernelInfo& k, CrossPairs requested) {
  if (requested == CrossPairs::once && !k.newton3())
    throw UsageError("--cross-pairs once sends counterforces back, which only Newton-3 kernels compute; " + k.name +
                     " sums each particle's force from full neighbor lists (use twice or auto)");
  if (requested != CrossPairs::automatic) return requested;
  return k.newton3() && !k.deterministic() ? CrossPairs::once : CrossPairs::twice;
}

void check_cross_pairs_used(const std::string& text, bool spread) {
  if (spread || text == "auto") return;
  throw UsageError("--cross-pairs " + text +
                   " chooses how pairs across two parts are summed; it applies with --gpus above 1 or over several "
                   "processes (nearfield-mpi)");
}

bool matches_one_gpu_bitwise(const KernelInfo& k, CrossPairs requested) {
  if (!k.deterministic() || resolve_cross_pairs(k, requested) != CrossPairs::twice) return false;
  // A CPU Newton-3 kernel with OpenMP (cpu-omp-n3) sums per-thread buffers over box ranges cut from
  // the boxes it holds; a part's ranges are not the whole input's, so with more than one thread a
  // particle's contributions are grouped, and rounded, differently (docs/design.md §15).
  return k.gpu() || !(k.openmp() && k.newton3()) || omp_get_max_threads() == 1;
}

bool emulating_gpus() {
  return env::choice("NEARFIELD_EMULATE_GPUS", {"0", "1"}) == "1";
}

const char* emulate_gpus_help() {
  return "; NEARFIELD_EMULATE_GPUS=1 puts every part on GPU 0 and moves the messages by device copies instead of NCCL "
         "(a testing aid for one-GPU machines: results as on G GPUs, timings meaningless)";
}

void check_gpus(const KernelInfo& k, int gpus) {
  if (gpus < 1) throw UsageError("--gpus must be at least 1, not " + std::to_string(gpus));
  if (gpus == 1) return;
  if (k.far_field() && k.gpu())
    throw UsageError("--gpus " + std::to_string(gpus) + ": " + k.name +
                     " runs on one GPU for now (a full method's far field is not spread over several GPUs; use --gpus 1)");
  if (!k.make_part)
    throw UsageError("--gpus " + std::to_string(gpus) + " spreads the GPU near-field kernels over several GPUs; " +
                     k.name + " is " + (k.gpu() ? "an all-pairs kernel" : k.far_field() ? "a CPU method" : "a CPU kernel") +
                     " (it runs with --gpus 1)");
  gpu::require("--gpus " + std::to_string(gpus));
  if (emulating_gpus()) return;  // every part on device 0, no NCCL
  try {
    if (!nccl_compiled()) load_nccl();  // throws the build's reason
    const int devices = gpu::device_count();
    if (devices < gpus)
      throw UsageError("--gpus " + std::to_string(gpus) + ": this machine has " + std::to_string(devices) +
                       " CUDA device" + (devices == 1 ? "" : "s"));
    load_nccl();
  } catch (const UsageError& e) {  // the GPUs or NCCL are missing: name the testing aid
    throw UsageError(std::string(e.what()) +
                     " (to test the multi-GPU path without them, set NEARFIELD_EMULATE_GPUS=1: every part then runs "
                     "on GPU 0, timings meaningless)");
  }
}

#if defined(NF_HAVE_CUDA)
namespace {

// One GPU's part as the exchange sees it: the kernel's part method on the part's particles, the
// index lists and buffers of its transfers.
class GpuPartArrays final : public PartArrays {
 public:
  GpuPartArrays(int device, std::unique_ptr<PartMethod> m, const PartPlan& plan)
      : device_(device), method_(std::move(m)) {
    gpu::DeviceScope scope(device_);
    for (const PeerTransfer& t : plan.peers) {
      index_.emplace_back(t.send);
      send_.emplace_back(t.send.size() * body_bytes());
      back_.emplace_back(t.send.size() * acc_bytes());
      // The halo bodies came with the part's input (its tree needs their boxes); from now on they
      // are only what the exchange delivers, so a transfer that fails to arrive shows as NaN.
      if (t.recv_count) gpu::fill_bytes(bodies() + t.recv_begin * body_bytes(), 0xFF, t.recv_count * body_bytes());
    }
  }
  ~GpuPartArrays() override {
    gpu::DeviceScope scope(device_);  // everything of the part is freed on its device
    index_.clear();
    send_.clear();
    back_.clear();
    method_.reset();
  }

  std::size_t body_bytes() const override { return method_->body_bytes(); }
  std::size_t acc_bytes() const override { return method_->acc_bytes(); }
  unsigned char* bodies() override { return static_cast<unsigned char*>(method_->device_bodies()); }
  unsigned char* acc() override { return static_cast<unsigned char*>(method_->device_acc()); }
  void pack(std::size_t k) override {
    gpu::DeviceScope scope(device_);
    gather_records(method_->device_bodies(), body_bytes(), index_[k].data(), index_[k].size(), send_[k].data());
  }
  unsigned char* send_buffer(std::size_t k) override { return send_[k].data(); }
  void compute() override {
    gpu::DeviceScope scope(device_);
    method_->evaluate();
  }
  unsigned char* counterforce_buffer(std::size_t k) override { return back_[k].data(); }
  void add_counterforces(std::size_t k) override {
    gpu::DeviceScope scope(device_);
    add_accelerations(method_->device_acc(), method_->double_precision(), index_[k].data(), index_[k].size(),
                      back_[k].data());
  }

  int device() const { return device_; }
  PartMethod& method() { return *method_; }
  //! The part's kernel time in the last evaluation (its method's events: the zeroing excluded; waits).
  double kernel_ms() {
    gpu::DeviceScope scope(device_);
    return method_->times().evaluate_ms;
  }

 private:
  int device_;
  std::unique_ptr<PartMethod> method_;
  std::vector<gpu::DeviceBuffer<std::uint32_t>> index_;  // per peer: sorted positions it is sent
  std::vector<gpu::DeviceBuffer<unsigned char>> send_, back_;
};

// Fails with a message when a part's GPU tree does not have the planned layout: the exchange
// would move the wrong particles.
void check_layout(int g, const PartMethod& part, const PartLayout& l, const BoxSet& boxes) {
  const std::vector<std::uint32_t> first = part.tree_box_first();
  const std::vector<std::uint64_t> key = part.tree_box_key();
  bool same = first.size() == l.first.size() && key.size() == l.boxes.size();
  for (std::size_t k = 0; same && k < l.boxes.size(); ++k) same = key[k] == boxes.key[l.boxes[k]];
  for (std::size_t k = 0; same && k < first.size(); ++k) same = first[k] == l.first[k];
  if (!same)
    throw std::logic_error("spread method: the tree of part " + std::to_string(g) + " (" + std::to_string(key.size()) +
                           " boxes) differs from its planned layout (" + std::to_string(l.boxes.size()) + " boxes)");
}

class SpreadMethod final : public ClusterMethod {
 public:
  SpreadMethod(const KernelInfo& k, const MethodSetup& s, const Spread& spread, GpuCluster c)
      : ClusterMethod(ForceModel::near_field, s), kernel_(k), cross_(resolve_cross_pairs(k, spread.cross)),
        cluster_(std::move(c)) {
    lead_ = cluster_.device.front();
    {
      gpu::DeviceScope scope(lead_);
      start_ = std::make_unique<gpu::Event>();
      stop_ = std::make_unique<gpu::Event>();
    }
    for (int device : cluster_.device) {
      gpu::DeviceScope scope(device);
      done_.push_back(std::make_unique<gpu::Event>());
    }
  }
  ~SpreadMethod() override {
    release_parts();
    for (std::size_t i = 0; i < done_.size(); ++i) {
      gpu::DeviceScope scope(cluster_.device[i]);
      done_[i].reset();
    }
    gpu::DeviceScope scope(lead_);
    start_.reset();
    stop_.reset();
  }
  bool on_device() const override { return false; }

  // The decomposition of these positions, and each local part's method prepared on its particles.
  void prepare(const Particles& p, std::uint64_t) override {
    const Stopwatch clock;
    release_parts();
    dim_ = p.dim;
    n_ = p.size();
    const int parts = cluster_.parts;
    // Every part's tree uses the whole input's domain: its boxes are the whole input's boxes.
    MethodSetup ps = setup_;
    ps.domain = setup_.domain ? *setup_.domain : default_domain(p);
    std::vector<std::uint32_t> particle_box;
    const BoxSet boxes = count_boxes(p, setup_.level, *ps.domain, &particle_box);
    const Decomposition d = decompose(boxes, parts);
    plan_ = exchange_plan(boxes, d, cross_);
    rows_ = part_rows(particle_box, plan_, boxes.boxes());
    particle_box = {};
    ps.scope.max_mass = p.max_mass();
    ps.scope.max_box_count = boxes.max_count();
    // One host thread per local GPU prepares its part (selection, upload, tree build, plan) at once;
    // parts that share a device (emulated GPUs) are prepared one after another, as they run.
    const bool shared_device =
        std::set<int>(cluster_.device.begin(), cluster_.device.end()).size() < cluster_.device.size();
    parts_.clear();
    parts_.resize(parts);
    std::vector<std::exception_ptr> failed(cluster_.local.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < cluster_.local.size(); ++i) {
      const int g = cluster_.local[i], device = cluster_.device[i];
      if (plan_.parts[g].layout.particles() == 0) continue;  // no boxes: nothing to compute or move
      threads.emplace_back([&, i, g, device] {
        try {
          gpu::set_device(device);
          MethodSetup mine = ps;
          if (cross_ == CrossPairs::once) {  // own boxes come first, the halo above them follows
            mine.scope.computed_boxes = plan_.parts[g].layout.own_end;
            mine.scope.lower_neighbors = false;
          }
          const Particles selected = select_rows(p, rows_[g]);
          std::unique_ptr<PartMethod> m = kernel_.make_part(kernel_, mine, selected);
          m->prepare(selected);
          check_layout(g, *m, plan_.parts[g].layout, boxes);
          parts_[g] = std::make_unique<GpuPartArrays>(device, std::move(m), plan_.parts[g]);
        } catch (...) {
          failed[i] = std::current_exception();
        }
      });
      if (shared_device) threads.back().join();
    }
    for (std::thread& t : threads)
      if (t.joinable()) t.join();
    for (const std::exception_ptr& e : failed)
      if (e) std::rethrow_exception(e);
    raw_.clear();
    tree_ms_ = plan_ms_ = 0;
    for (int g = 0; g < parts; ++g) {
      const bool here = std::find(cluster_.local.begin(), cluster_.local.end(), g) != cluster_.local.end();
      if (!here) rows_[g] = {};  // another process's part
      raw_.push_back(parts_[g].get());
      if (!parts_[g]) continue;
      gpu::DeviceScope scope(parts_[g]->device());
      const StageTimes t = parts_[g]->method().times();
      tree_ms_ = std::max(tree_ms_, t.get("tree"));
      plan_ms_ = std::max(plan_ms_, t.get("plan"));
    }
    // Decomposition, selections, uploads and gathers: the host's time beyond the slowest tree and plan.
    transfer_ms_ = std::max(0.0, clock.ms() - tree_ms_ - plan_ms_);
    gather_ms_ = 0;
  }

  void evaluate() override {
    if (cluster_.barrier) cluster_.barrier();  // every process starts together
    enqueue();
  }
  void wait() override {
    gpu::DeviceScope scope(lead_);
    stop_->synchronize();  // the lead GPU waited for the others before the stop
  }
  std::vector<double> accelerations() override {
    const Stopwatch clock;
    std::vector<double> out(n_ * dim_, std::nan(""));
    for (std::size_t g = 0; g < parts_.size(); ++g) {
      if (!parts_[g]) continue;
      gpu::DeviceScope scope(parts_[g]->device());
      PartMethod& part = parts_[g]->method();
      const std::vector<double> a = part.sorted_accelerations();
      const std::vector<std::uint32_t>& order = part.sorted_order();
      const PartLayout& l = plan_.parts[g].layout;
      for (std::uint64_t s = l.own_first(); s < l.own_last(); ++s) {
        const std::size_t row = rows_[g][order[s]];
        for (int c = 0; c < dim_; ++c) out[row * dim_ + c] = a[s * dim_ + c];
      }
    }
    gather_ms_ = clock.ms();
    return out;
  }
  void poison_output() override {
    for (auto& part : parts_)
      if (part) {
        gpu::DeviceScope scope(part->device());
        part->method().poison_output();
      }
  }
  StageTimes times() override {
    double total = [&] {
      gpu::DeviceScope scope(lead_);
      return stop_->elapsed_since(*start_);
    }();
    double worst = 0, sum = 0;
    int busy = 0;
    for (auto& part : parts_)
      if (part) {
        const double ms = part->kernel_ms();
        worst = std::max(worst, ms);
        sum += ms;
        ++busy;
      }
    if (cluster_.max_over_processes) {
      total = cluster_.max_over_processes(total);
      worst = cluster_.max_over_processes(worst);
    }
    return {{{"tree", tree_ms_}, {"plan", plan_ms_}, {"transfer", transfer_ms_ + gather_ms_}},
            total,
            {{"kernel_max", worst}, {"kernel_mean", busy ? sum / busy : 0.0}, {"comm", std::max(0.0, total - worst)}}};
  }
  std::vector<Count> counts() override { return {{"halo_bodies", plan_.moved_bodies()}}; }

  std::vector<std::uint32_t> rows_computed_here() override {
    std::vector<std::uint32_t> rows;
    for (std::size_t g = 0; g < parts_.size(); ++g) {
      if (!parts_[g]) continue;
      gpu::DeviceScope scope(parts_[g]->device());
      const std::vector<std::uint32_t>& order = parts_[g]->method().sorted_order();
      const PartLayout& l = plan_.parts[g].layout;
      for (std::uint64_t s = l.own_first(); s < l.own_last(); ++s) rows.push_back(rows_[g][order[s]]);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

 private:
  void release_parts() {
    raw_.clear();
    for (auto& part : parts_) part.reset();  // each frees on its own device
  }
  // The lead GPU marks the start and every local GPU waits for it; the lead waits for every local
  // GPU, then marks the stop.
  void enqueue() {
    {
      gpu::DeviceScope scope(lead_);
      start_->record();
    }
    for (int device : cluster_.device)
      if (device != lead_) {
        gpu::DeviceScope scope(device);
        start_->wait_on();
      }
    evaluate_parts(plan_, raw_, *cluster_.transport);
    for (std::size_t i = 0; i < cluster_.device.size(); ++i) {
      if (cluster_.device[i] == lead_) continue;
      {
        gpu::DeviceScope scope(cluster_.device[i]);
        done_[i]->record();
      }
      gpu::DeviceScope scope(lead_);
      done_[i]->wait_on();
    }
    gpu::DeviceScope scope(lead_);
    stop_->record();
  }

  const KernelInfo& kernel_;
  CrossPairs cross_;
  GpuCluster cluster_;
  int lead_ = 0;  // the device whose events time the evaluation
  int dim_ = 2;
  std::size_t n_ = 0;
  ExchangePlan plan_;
  std::vector<std::vector<std::uint32_t>> rows_;        // per part: its input rows (this process's parts only)
  std::vector<std::unique_ptr<GpuPartArrays>> parts_;   // null for other processes' parts and parts without particles
  std::vector<PartArrays*> raw_;
  std::unique_ptr<gpu::Event> start_, stop_;            // on the lead device
  std::vector<std::unique_ptr<gpu::Event>> done_;       // done_[i] on the device of local part i
  double tree_ms_ = 0, plan_ms_ = 0, transfer_ms_ = 0, gather_ms_ = 0;
};

}  // namespace
#endif

std::unique_ptr<ClusterMethod> make_cluster_method(const KernelInfo& k, const MethodSetup& s, const Spread& spread,
                                                   GpuCluster c) {
  if (s.count_interactions) throw UsageError("counting mode runs on one GPU (--gpus 1)");
  if (!k.make_part) check_gpus(k, 2);  // the message for a kernel that cannot be spread
  if (c.parts < 1 || c.local.empty() || c.local.size() != c.device.size() || !c.transport)
    throw std::logic_error("make_cluster_method: parts, local parts, their devices and a transport are needed");
#if defined(NF_HAVE_CUDA)
  return std::make_unique<SpreadMethod>(k, s, spread, std::move(c));
#else
  (void)s, (void)spread;
  throw UsageError("several GPUs need a CUDA build");
#endif
}

std::unique_ptr<ForceMethod> make_spread_method(const KernelInfo& k, const MethodSetup& s, const Particles& like,
                                                const Spread& spread) {
  if (ProcessGroup* g = process_group(); g && g->size() > 1) return make_process_method(k, s, like, spread, *g);
  check_gpus(k, spread.gpus);
  if (spread.gpus == 1) return make_measured_method(k, s, like);  // make_method, or a measured order first
  check_setup(k, s, like);
  GpuCluster c;
  c.parts = spread.gpus;
  const bool emulated = emulating_gpus();
  for (int g = 0; g < spread.gpus; ++g) c.local.push_back(g), c.device.push_back(emulated ? 0 : g);
  if (emulated)
    c.transport = std::make_shared<DeviceLoopbackTransport>();
  else
    c.transport = NcclTransport::for_devices(spread.gpus);  // before any work: a missing library fails at once
  return make_cluster_method(k, s, spread, std::move(c));
}

}  // namespace nf
