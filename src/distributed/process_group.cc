#include "distributed/process_group.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <vector>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "distributed/host_spread_method.h"
#include "distributed/nccl_transport.h"

namespace nf {
namespace {

std::shared_ptr<ProcessGroup>& the_group() {
  static std::shared_ptr<ProcessGroup> g;
  return g;
}

// A method spread over the ranks whose accelerations every rank receives in full: the ranks'
// own rows and values are gathered after each evaluation they ask for.
class GatheredMethod final : public ForceMethod {
 public:
  GatheredMethod(std::unique_ptr<ClusterMethod> m, ProcessGroup& g)
      : ForceMethod(m->model(), m->setup()), m_(std::move(m)), g_(g) {}
  bool on_device() const override { return false; }
  void prepare(const Particles& p, std::uint64_t step) override {
    dim_ = p.dim;
    n_ = p.size();
    m_->prepare(p, step);
  }
  void evaluate() override { m_->evaluate(); }
  void wait() override { m_->wait(); }
  std::vector<double> accelerations() override {
    const std::vector<double> mine = m_->accelerations();
    const std::vector<std::uint32_t> rows = m_->rows_computed_here();
    std::vector<double> values(rows.size() * dim_);
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (int c = 0; c < dim_; ++c) values[i * dim_ + c] = mine[std::size_t(rows[i]) * dim_ + c];
    g_.checkpoint();
    const ProcessGroup::Section section(g_);
    const std::vector<unsigned char> all_rows = g_.all_gather(rows.data(), rows.size(), sizeof(std::uint32_t));
    const std::vector<unsigned char> all_values = g_.all_gather(values.data(), rows.size(), dim_ * sizeof(double));
    if (all_rows.size() / sizeof(std::uint32_t) * dim_ * sizeof(double) != all_values.size())
      throw std::logic_error("gathered method: rows and values of the ranks do not pair up");
    std::vector<double> out(n_ * dim_, std::nan(""));
    const std::size_t count = all_rows.size() / sizeof(std::uint32_t);
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t row = 0;
      std::memcpy(&row, all_rows.data() + i * sizeof row, sizeof row);
      std::memcpy(&out[std::size_t(row) * dim_], all_values.data() + i * dim_ * sizeof(double), dim_ * sizeof(double));
    }
    return out;
  }
  void poison_output() override { m_->poison_output(); }
  StageTimes times() override { return m_->times(); }
  std::vector<Count> counts() override { return m_->counts(); }
  double slowest(double ms) override { return g_.agreed_max(ms); }

 private:
  std::unique_ptr<ClusterMethod> m_;
  ProcessGroup& g_;
  int dim_ = 2;
  std::size_t n_ = 0;
};

}  // namespace

ProcessGroup::Section::Section(ProcessGroup& g) : g_(g), exceptions_(std::uncaught_exceptions()) {}
ProcessGroup::Section::~Section() {
  if (std::uncaught_exceptions() > exceptions_) g_.broken_ = true;
}

ProcessGroup* process_group() { return the_group().get(); }
int process_count() { return the_group() ? the_group()->size() : 1; }
void set_process_group(std::shared_ptr<ProcessGroup> g) { the_group() = std::move(g); }

namespace {

// Words mixed into a 52-bit digest, exact in a double, so that the ranks can compare theirs
// (ProcessGroup::same_on_every_rank).
struct Digest {
  std::uint64_t h = 1469598103934665603ull;
  void mix(std::uint64_t w) {
    h ^= w;
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  double value() const { return double(h >> 12); }
};

// The particles' digest: their count, dimension, positions, masses and velocities (simulate), bit
// for bit.
double input_digest(const Particles& p) {
  Digest d;
  d.mix(p.size());
  d.mix(std::uint64_t(p.dim));
  for (const std::vector<double>* v : {&p.x, &p.y, &p.z, &p.m, &p.vx, &p.vy, &p.vz})
    for (double x : *v) {
      std::uint64_t w;
      std::memcpy(&w, &x, sizeof w);
      d.mix(w);
    }
  return d.value();
}

}  // namespace

double arguments_digest(const std::vector<std::string>& args) {
  Digest d;
  d.mix(args.size());
  for (const std::string& a : args) {
    d.mix(a.size());
    for (const char c : a) d.mix(static_cast<unsigned char>(c));
  }
  return d.value();
}

std::unique_ptr<ForceMethod> make_process_method(const KernelInfo& k, const MethodSetup& s, const Particles& like,
                                                 const Spread& spread, ProcessGroup& g) {
  const std::string ranks = std::to_string(g.size()) + " MPI processes";
  if (spread.gpus != 1)
    throw UsageError("--gpus " + std::to_string(spread.gpus) + " under MPI: each process computes one part (" + ranks +
                     "); start one process per GPU with mpirun -np instead");
  if (s.count_interactions) throw UsageError("counting mode runs in one process, not over " + ranks);
  if (!k.make_host_part && !k.make_part)
    throw UsageError(k.name + " cannot be spread over " + ranks + ": only near-field kernels can (" +
                     (k.far_field() ? "a full method" : "an all-pairs kernel") + " runs in one process: nearfield)");
  check_setup(k, s, like);
  // Every rank reads the input itself: ranks given different files (or different --seed) had
  // computed with each other's halos silently, or aborted inside MPI. Agreed before any exchange.
  if (!g.same_on_every_rank(input_digest(like)))
    throw UsageError("the " + ranks + " read different inputs (their particle counts, positions, masses or velocities differ): "
                     "every rank must read the same particles");
  std::unique_ptr<ClusterMethod> m;
  if (k.make_host_part) {
    HostCluster c;
    c.parts = g.size();
    c.local = {g.rank()};
    c.transport = g.transport();
    c.barrier = [&g] { g.checkpoint(); };
    c.max_over_processes = [&g](double v) { return g.agreed_max(v); };
    m = make_host_cluster_method(k, s, spread, std::move(c));
    g.checkpoint();  // every rank has its method
  } else {
    // One GPU per process: the one of this rank's place on its host.
    gpu::require("a GPU kernel under MPI");
    const int local = g.rank_on_host(), devices = gpu::device_count();
    if (local >= devices)
      throw UsageError("rank " + std::to_string(g.rank()) + " is process " + std::to_string(local + 1) +
                       " on its host, which has " + std::to_string(devices) + " CUDA device" +
                       (devices == 1 ? "" : "s"));
    gpu::set_device(local);
    load_nccl();
    const std::string made = g.rank() == 0 ? nccl_unique_id() : std::string(128, '\0');
    g.checkpoint();  // every rank has its GPU and NCCL: the collectives start
    const ProcessGroup::Section section(g);
    GpuCluster c;
    c.parts = g.size();
    c.local = {g.rank()};
    c.device = {local};
    const std::string id = g.broadcast(made);
    c.transport = std::make_shared<NcclTransport>(g.rank(), g.size(), local, id);
    c.barrier = [&g] { g.checkpoint(); };
    c.max_over_processes = [&g](double v) { return g.agreed_max(v); };
    m = make_cluster_method(k, s, spread, std::move(c));
  }
  return std::make_unique<GatheredMethod>(std::move(m), g);
}

}  // namespace nf
