#include "multigpu/multi_gpu.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <thread>

#include "common/errors.h"
#include "common/gpu_runtime.h"
#include "harness/device_part.h"
#include "multigpu/decomposition.h"
#include "multigpu/exchange.h"
#include "multigpu/nccl_transport.h"

#if defined(NF_HAVE_CUDA)
#include "multigpu/halo_gpu.h"
#endif

namespace nf {

CrossPairs resolve_cross_pairs(const KernelInfo& k, CrossPairs requested) {
  if (requested == CrossPairs::once && !k.newton3)
    throw UsageError("--cross-pairs once sends counterforces back, which only Newton-3 kernels compute; " + k.name +
                     " sums each particle's force from full neighbor lists (use twice or auto)");
  if (requested != CrossPairs::automatic) return requested;
  return k.newton3 && !k.deterministic ? CrossPairs::once : CrossPairs::twice;
}

bool matches_one_gpu_bitwise(const KernelInfo& k, CrossPairs requested) {
  return k.deterministic && resolve_cross_pairs(k, requested) == CrossPairs::twice;
}

void check_gpus(const KernelInfo& k, int gpus) {
  if (gpus < 1) throw UsageError("--gpus must be at least 1, not " + std::to_string(gpus));
  if (gpus == 1) return;
  if (!k.gpu || !k.near_field)
    throw UsageError("--gpus " + std::to_string(gpus) + " spreads the GPU near-field kernels over several GPUs; " +
                     k.name + " is " + (k.gpu ? "an all-pairs kernel" : "a CPU kernel") + " (it runs with --gpus 1)");
  gpu::require("--gpus " + std::to_string(gpus));
  if (!nccl_compiled()) load_nccl();  // throws the build's reason
  const int devices = gpu::device_count();
  if (devices < gpus)
    throw UsageError("--gpus " + std::to_string(gpus) + ": this machine has " + std::to_string(devices) + " CUDA device" +
                     (devices == 1 ? "" : "s"));
  load_nccl();
}

#if defined(NF_HAVE_CUDA)
namespace {

// One GPU's part as the exchange sees it: the kernel's evaluation on the part's particles, the
// index lists and buffers of its transfers, and events around its kernel.
class GpuPart final : public PartDevice {
 public:
  GpuPart(int device, std::unique_ptr<Evaluation> e, const PartPlan& plan)
      : device_(device), eval_(std::move(e)), part_(dynamic_cast<DevicePart*>(eval_.get())) {
    if (!part_) throw std::logic_error("multi-GPU: the kernel's evaluation offers no device part");
    gpu::DeviceScope scope(device_);
    for (const PeerTransfer& t : plan.peers) {
      index_.emplace_back(t.send);
      send_.emplace_back(t.send.size() * body_bytes());
      back_.emplace_back(t.send.size() * acc_bytes());
      // The halo bodies came with the part's input (its tree needs their boxes); from now on they
      // are only what the exchange delivers, so a transfer that fails to arrive shows as NaN.
      if (t.recv_count) gpu::fill_bytes(bodies() + t.recv_begin * body_bytes(), 0xFF, t.recv_count * body_bytes());
    }
    kernel_start_ = std::make_unique<gpu::Event>();
    kernel_end_ = std::make_unique<gpu::Event>();
  }
  ~GpuPart() override {
    gpu::DeviceScope scope(device_);  // everything of the part is freed on its device
    kernel_start_.reset();
    kernel_end_.reset();
    index_.clear();
    send_.clear();
    back_.clear();
    eval_.reset();
  }

  std::size_t body_bytes() const override { return part_->body_bytes(); }
  std::size_t acc_bytes() const override { return part_->acc_bytes(); }
  unsigned char* bodies() override { return static_cast<unsigned char*>(part_->device_bodies()); }
  unsigned char* acc() override { return static_cast<unsigned char*>(part_->device_acc()); }
  void pack(std::size_t k) override {
    gpu::DeviceScope scope(device_);
    gather_records(part_->device_bodies(), body_bytes(), index_[k].data(), index_[k].size(), send_[k].data());
  }
  unsigned char* send_buffer(std::size_t k) override { return send_[k].data(); }
  void compute() override {
    gpu::DeviceScope scope(device_);
    kernel_start_->record();
    part_->launch_async();
    kernel_end_->record();
  }
  unsigned char* counterforce_buffer(std::size_t k) override { return back_[k].data(); }
  void add_counterforces(std::size_t k) override {
    gpu::DeviceScope scope(device_);
    add_accelerations(part_->device_acc(), part_->double_precision(), index_[k].data(), index_[k].size(), back_[k].data());
  }

  int device() const { return device_; }
  Evaluation& evaluation() { return *eval_; }
  DevicePart& part() { return *part_; }
  //! The kernel time of the last evaluation (waits for it).
  double kernel_ms() {
    gpu::DeviceScope scope(device_);
    return kernel_end_->elapsed_since(*kernel_start_);
  }

 private:
  int device_;
  std::unique_ptr<Evaluation> eval_;
  DevicePart* part_;
  std::vector<gpu::DeviceBuffer<std::uint32_t>> index_;  // per peer: sorted positions it is sent
  std::vector<gpu::DeviceBuffer<unsigned char>> send_, back_;
  std::unique_ptr<gpu::Event> kernel_start_, kernel_end_;
};

// Fails with a message when a part's GPU tree does not have the planned layout: the exchange
// would move the wrong particles.
void check_layout(int g, const DevicePart& part, const PartLayout& l, const BoxSet& boxes) {
  const std::vector<std::uint32_t> first = part.tree_box_first();
  const std::vector<std::uint64_t> key = part.tree_box_key();
  bool same = first.size() == l.first.size() && key.size() == l.boxes.size();
  for (std::size_t k = 0; same && k < l.boxes.size(); ++k) same = key[k] == boxes.key[l.boxes[k]];
  for (std::size_t k = 0; same && k < first.size(); ++k) same = first[k] == l.first[k];
  if (!same)
    throw std::logic_error("multi-GPU: the tree of part " + std::to_string(g) + " (" + std::to_string(key.size()) +
                           " boxes) differs from its planned layout (" + std::to_string(l.boxes.size()) + " boxes)");
}

class MultiGpuEvaluation final : public Evaluation {
 public:
  MultiGpuEvaluation(const KernelInfo& k, const Particles& p, const ForceSetup& s)
      : dim_(p.dim), n_(p.size()), gpus_(s.gpus) {
    transport_ = NcclTransport::for_devices(gpus_);  // first: a missing library fails before any work
    const CrossPairs cross = resolve_cross_pairs(k, s.cross_pairs);
    std::vector<std::uint32_t> particle_box;
    const BoxSet boxes = count_boxes(p, s.level, s.domain, &particle_box);
    const Decomposition d = decompose(boxes, gpus_);
    plan_ = exchange_plan(boxes, d, cross);
    rows_ = part_rows(particle_box, plan_, boxes.boxes());
    particle_box = {};
    std::vector<DevicePlacement> where(gpus_);
    for (int g = 0; g < gpus_; ++g) {
      where[g].max_mass = p.max_mass();
      where[g].max_box_count = boxes.max_count();
      if (cross == CrossPairs::once) where[g].target_boxes = plan_.parts[g].layout.own_end;  // own boxes come first
    }
    // One host thread per GPU prepares its part (selection, upload, tree build, plan) at once.
    parts_.resize(gpus_);
    std::vector<std::exception_ptr> failed(gpus_);
    std::vector<std::thread> threads;
    for (int g = 0; g < gpus_; ++g) {
      if (plan_.parts[g].layout.particles() == 0) continue;  // no boxes: nothing to compute or move
      threads.emplace_back([&, g] {
        try {
          gpu::set_device(g);
          ForceSetup ps = s;
          ps.gpus = 1;
          ps.placement = &where[g];
          std::unique_ptr<Evaluation> e = k.make(k, select_rows(p, rows_[g]), ps);
          parts_[g] = std::make_unique<GpuPart>(g, std::move(e), plan_.parts[g]);
          check_layout(g, parts_[g]->part(), plan_.parts[g].layout, boxes);
        } catch (...) {
          failed[g] = std::current_exception();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : failed)
      if (e) std::rethrow_exception(e);
    for (auto& part : parts_) {
      raw_.push_back(part.get());
      if (!part) continue;
      tree_ms = std::max(tree_ms, part->evaluation().tree_ms);
      plan_ms = std::max(plan_ms, part->evaluation().plan_ms);
      gpu_build = part->evaluation().gpu_build;
    }
    {
      gpu::DeviceScope scope(0);
      start_ = std::make_unique<gpu::Event>();
      stop_ = std::make_unique<gpu::Event>();
    }
    for (int g = 0; g < gpus_; ++g) {
      gpu::DeviceScope scope(g);
      done_.push_back(std::make_unique<gpu::Event>());
    }
    span.gpus = gpus_;
    span.halo_bodies = plan_.moved_bodies();
  }
  ~MultiGpuEvaluation() override {
    for (auto& part : parts_) part.reset();  // each frees on its own device
    for (int g = 0; g < static_cast<int>(done_.size()); ++g) {
      gpu::DeviceScope scope(g);
      done_[g].reset();
    }
    gpu::DeviceScope scope(0);
    start_.reset();
    stop_.reset();
  }

  void run() override {
    enqueue();
    gpu::DeviceScope scope(0);
    stop_->synchronize();  // GPU 0 waited for every GPU before the stop
  }
  double run_timed_ms() override {
    enqueue();
    const double total = [&] {
      gpu::DeviceScope scope(0);
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
    span.kernel_max_ms = worst;
    span.kernel_mean_ms = busy ? sum / busy : 0;
    span.comm_ms = std::max(0.0, total - worst);
    return total;
  }
  std::vector<double> accelerations() override {
    std::vector<double> out(n_ * dim_, std::nan(""));
    for (int g = 0; g < gpus_; ++g) {
      if (!parts_[g]) continue;
      gpu::DeviceScope scope(g);
      DevicePart& part = parts_[g]->part();
      const std::vector<double> a = part.sorted_accelerations();
      const std::vector<std::uint32_t>& order = part.sorted_order();
      const PartLayout& l = plan_.parts[g].layout;
      for (std::uint64_t s = l.own_first(); s < l.own_last(); ++s) {
        const std::size_t row = rows_[g][order[s]];
        for (int c = 0; c < dim_; ++c) out[row * dim_ + c] = a[s * dim_ + c];
      }
    }
    return out;
  }
  void poison_output() override {
    for (auto& part : parts_)
      if (part) {
        gpu::DeviceScope scope(part->device());
        part->evaluation().poison_output();
      }
  }

 private:
  // GPU 0 marks the start, every GPU waits for it; GPU 0 waits for every GPU, then marks the stop.
  void enqueue() {
    {
      gpu::DeviceScope scope(0);
      start_->record();
    }
    for (int g = 1; g < gpus_; ++g) {
      gpu::DeviceScope scope(g);
      start_->wait_on();
    }
    evaluate_parts(plan_, raw_, *transport_);
    for (int g = 1; g < gpus_; ++g) {
      {
        gpu::DeviceScope scope(g);
        done_[g]->record();
      }
      gpu::DeviceScope scope(0);
      done_[g]->wait_on();
    }
    gpu::DeviceScope scope(0);
    stop_->record();
  }

  int dim_;
  std::size_t n_;
  int gpus_;
  std::shared_ptr<NcclTransport> transport_;
  ExchangePlan plan_;
  std::vector<std::vector<std::uint32_t>> rows_;  // per part: its input rows (sorted position -> row via order)
  std::vector<std::unique_ptr<GpuPart>> parts_;   // null for a part without particles
  std::vector<PartDevice*> raw_;
  std::unique_ptr<gpu::Event> start_, stop_;      // on GPU 0
  std::vector<std::unique_ptr<gpu::Event>> done_;  // done_[g] on GPU g
};

}  // namespace
#endif

std::unique_ptr<Evaluation> prepare_multi_gpu(const KernelInfo& k, const Particles& p, const ForceSetup& s) {
  check_gpus(k, s.gpus);
  if (s.count_interactions) throw UsageError("counting mode runs on one GPU (--gpus 1)");
#if defined(NF_HAVE_CUDA)
  if (s.gpus == 1) return prepare(k, p, s);
  return std::make_unique<MultiGpuEvaluation>(k, p, s);
#else
  (void)p;
  throw UsageError("--gpus needs a CUDA build");  // check_gpus has refused already
#endif
}

}  // namespace nf
