#include "sim/state.h"

#include <stdexcept>

#include "core/gpu_runtime.h"
#include "core/timing.h"
#if defined(NF_HAVE_CUDA)
#include "sim/integrate_gpu.h"
#endif

namespace nf::sim {
namespace {

class HostState : public State {
 public:
  HostState(Particles p, ForceMethod& method) : State(method), p_(std::move(p)) {}
  void compute_accelerations(std::uint64_t step) override { acc_ = evaluated(method_, step); }
  void kick(double h) override { kick_ms_ = advance(h, 0.0, false); }
  void kick_drift(double h, double dt) override { drift_ms_ = advance(h, dt, true); }
  double integrate_ms() override { return drift_ms_ + kick_ms_; }
  Particles& particles() override { return p_; }
  double potential() override { return method_.potential(p_); }
  std::vector<double> accelerations() override { return acc_; }
  std::vector<double> accelerations_of(ForceMethod& other, std::uint64_t step) override { return evaluated(other, step); }

 private:
  std::vector<double> evaluated(ForceMethod& m, std::uint64_t step) {
    m.prepare(p_, step);
    m.evaluate();
    return m.accelerations();
  }
  double advance(double h, double dt, bool drift) {
    const Stopwatch clock;
    const std::size_t n = p_.size();
    const int dim = p_.dim;
    std::vector<double>* pos[3] = {&p_.x, &p_.y, &p_.z};
    std::vector<double>* vel[3] = {&p_.vx, &p_.vy, &p_.vz};
    for (int d = 0; d < dim; ++d) {
      double* x = pos[d]->data();
      double* v = vel[d]->data();
      const double* a = acc_.data() + d;
      for (std::size_t i = 0; i < n; ++i) {
        v[i] = v[i] + a[i * dim] * h;
        if (drift) x[i] = x[i] + v[i] * dt;
      }
    }
    return clock.ms();
  }

  Particles p_;
  std::vector<double> acc_;
  double drift_ms_ = 0, kick_ms_ = 0;
};

#if defined(NF_HAVE_CUDA)
// Positions and masses in DeviceParticles, velocities and accelerations in DeviceVectors: the
// layout the tree builder and the methods' gathers read. Near-field methods keep the arrays in
// their tree's order (ForceMethod::prepare_in_place); index_ then maps each row of the device
// arrays to its input row, and the host sees input order only.
class DeviceState : public State {
 public:
  DeviceState(Particles p, ForceMethod& method)
      : State(method), host_(std::move(p)), p_(upload_particles(host_)), v_(host_.dim, host_.size()),
        a_(host_.dim, host_.size()) {
    v_.x.upload(host_.vx);
    v_.y.upload(host_.vy);
    if (host_.dim == 3) v_.z.upload(host_.vz);
    std::vector<std::uint32_t> rows(host_.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::uint32_t>(i);
    index_ = gpu::DeviceBuffer<std::uint32_t>(rows);
  }
  void compute_accelerations(std::uint64_t step) override {
    complete();  // (a kick still deferred here would read the accelerations about to be replaced)
    if (method_.prepare_in_place(p_, v_, index_, step)) moved_ = true;
    method_.evaluate();
    // The kicks read the method's own output where it lies in the state's order; a_ is then
    // filled only when asked for (accelerations(), restore_input_order()).
    rows_ = method_.state_order_acc();  // none unless this prepare moved the state
    a_current_ = rows_.rows == nullptr;
    if (a_current_) method_.accelerations(a_);
    done_.record();
  }
  void restore_input_order() override {
    if (!moved_) return;
    complete();
    current_a();
    sim_gpu::restore_input_order(p_, v_, a_, index_);
    rows_ = {};  // the method's rows keep the old order
    moved_ = false;
  }
  // The closing kick of a step waits for the next step's opening kick (kick_drift), so that both
  // read the accelerations and write the velocities in one pass.
  void kick(double h) override {
    complete();  // two kicks in a row stay two rounded steps
    deferred_kick_ = h;
  }
  void kick_drift(double h, double dt) override {
    drift_timer_.start();
    sim_gpu::kick_drift(p_, v_, kick_acc(), deferred_kick_, h, dt);
    drift_timer_.stop();
    deferred_kick_ = 0.0;
    drifted_ = true;
  }
  void complete() override {
    if (deferred_kick_ == 0.0) return;
    kick_timer_.start();
    sim_gpu::kick(v_, kick_acc(), deferred_kick_);
    kick_timer_.stop();
    deferred_kick_ = 0.0;
    kicked_ = true;
  }
  double integrate_ms() override {
    done_.synchronize();
    double ms = 0.0;
    if (drifted_) ms += drift_timer_.elapsed_ms();
    if (kicked_) ms += kick_timer_.elapsed_ms();
    drifted_ = kicked_ = false;
    return ms;
  }
  Particles& particles() override {
    complete();
    const std::vector<std::uint32_t> rows = input_rows();
    download(p_.x, rows, host_.x);
    download(p_.y, rows, host_.y);
    download(v_.x, rows, host_.vx);
    download(v_.y, rows, host_.vy);
    if (host_.dim == 3) {
      download(p_.z, rows, host_.z);
      download(v_.z, rows, host_.vz);
    }
    return host_;
  }
  double potential() override { return method_.device_potential(); }
  std::vector<double> accelerations() override {
    current_a();
    return interleave(a_);
  }
  std::vector<double> accelerations_of(ForceMethod& other, std::uint64_t step) override {
    DeviceVectors a(host_.dim, host_.size());
    other.prepare(p_, step);
    other.evaluate();
    other.accelerations(a);  // in the state's current order, like p_
    return interleave(a);
  }

 private:
  sim_gpu::KickAcc kick_acc() const {
    if (a_current_) return {&a_, nullptr, false};
    return {nullptr, rows_.rows, rows_.double_rows};
  }
  // a_ = the last evaluation's accelerations, when the kicks have been reading the method's rows.
  void current_a() {
    if (a_current_) return;
    method_.accelerations(a_);
    a_current_ = true;
  }
  // The input row of each device row (empty: the identity).
  std::vector<std::uint32_t> input_rows() const { return moved_ ? index_.download() : std::vector<std::uint32_t>(); }
  // out[rows[s]] = a[s] (rows empty: out = a).
  static void download(const gpu::DeviceBuffer<double>& a, const std::vector<std::uint32_t>& rows,
                       std::vector<double>& out) {
    if (rows.empty()) {
      out = a.download();
      return;
    }
    const std::vector<double> sorted = a.download();
    out.resize(sorted.size());
    for (std::size_t s = 0; s < sorted.size(); ++s) out[rows[s]] = sorted[s];
  }
  // dim values per particle in input order.
  std::vector<double> interleave(const DeviceVectors& a) const {
    const std::vector<std::uint32_t> rows = input_rows();
    std::vector<double> axis[3];
    download(a.x, rows, axis[0]);
    download(a.y, rows, axis[1]);
    if (a.dim == 3) download(a.z, rows, axis[2]);
    std::vector<double> out(a.n * a.dim);
    for (std::size_t i = 0; i < a.n; ++i)
      for (int d = 0; d < a.dim; ++d) out[i * a.dim + d] = axis[d][i];
    return out;
  }

  Particles host_;  // ids, masses, dim; positions and velocities (input order) as of the last particles()
  DeviceParticles p_;
  DeviceVectors v_, a_;
  gpu::DeviceBuffer<std::uint32_t> index_;  // device row -> input row
  bool moved_ = false;                      // index_ is not the identity
  ForceMethod::StateOrderAcc rows_;         // the method's output in the state's order, if any
  bool a_current_ = true;                   // a_ holds the last evaluation (else rows_ does)
  double deferred_kick_ = 0.0;              // h of a kick not yet applied
  bool drifted_ = false, kicked_ = false;   // timers with a reading since integrate_ms
  gpu::EventTimer drift_timer_, kick_timer_;
  gpu::Event done_;                         // after the last evaluation's work
};
#endif

}  // namespace

std::unique_ptr<State> make_state(Particles p, ForceMethod& method) {
  p.add_velocities();
  if (!method.on_device()) return std::make_unique<HostState>(std::move(p), method);
#if defined(NF_HAVE_CUDA)
  return std::make_unique<DeviceState>(std::move(p), method);
#else
  throw std::logic_error("a device method in a CPU-only build");
#endif
}

}  // namespace nf::sim
