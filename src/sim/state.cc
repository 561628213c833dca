#include "sim/state.h"

#include <chrono>
#include <stdexcept>

#include "core/gpu_runtime.h"
#if defined(NF_HAVE_CUDA)
#include "sim/integrate_gpu.h"
#endif

namespace nf::sim {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

class HostState : public State {
 public:
  HostState(Particles p, ForceField& field) : State(field), p_(std::move(p)) {}
  void compute_accelerations(std::uint64_t step) override { field_.accelerations(p_, step, acc_); }
  void kick(double h) override { kick_ms_ = advance(h, 0.0, false); }
  void kick_drift(double h, double dt) override { drift_ms_ = advance(h, dt, true); }
  double integrate_ms() override { return drift_ms_ + kick_ms_; }
  Particles& particles() override { return p_; }
  double potential() override { return field_.host_potential(p_); }
  std::vector<double> accelerations() override { return acc_; }
  std::vector<double> accelerations_of(ForceField& other, std::uint64_t step) override {
    std::vector<double> a;
    other.accelerations(p_, step, a);
    return a;
  }

 private:
  double advance(double h, double dt, bool drift) {
    const auto t0 = Clock::now();
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
    return ms_since(t0);
  }

  Particles p_;
  std::vector<double> acc_;
  double drift_ms_ = 0, kick_ms_ = 0;
};

#if defined(NF_HAVE_CUDA)
// Positions and masses in DeviceParticles, velocities and accelerations in DeviceVectors: the
// layout the tree builder and the field's packing kernels read. Near-field fields keep the arrays
// in their tree's order (ForceField::accelerations_moving); index_ then maps each row of the
// device arrays to its input row, and the host sees input order only.
class DeviceState : public State {
 public:
  DeviceState(Particles p, ForceField& field)
      : State(field), host_(std::move(p)), p_(upload_particles(host_)), v_(host_.dim, host_.size()),
        a_(host_.dim, host_.size()) {
    v_.x.upload(host_.vx);
    v_.y.upload(host_.vy);
    if (host_.dim == 3) v_.z.upload(host_.vz);
    std::vector<std::uint32_t> rows(host_.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::uint32_t>(i);
    index_ = gpu::DeviceBuffer<std::uint32_t>(rows);
  }
  void compute_accelerations(std::uint64_t step) override {
    if (field_.accelerations_moving(p_, step, a_, v_, index_)) moved_ = true;
  }
  void restore_input_order() override {
    if (!moved_) return;
    sim_gpu::restore_input_order(p_, v_, a_, index_);
    moved_ = false;
  }
  void kick(double h) override {
    kick_timer_.start();
    sim_gpu::kick(v_, a_, h);
    kick_timer_.stop();
  }
  void kick_drift(double h, double dt) override {
    drift_timer_.start();
    sim_gpu::kick_drift(p_, v_, a_, h, dt);
    drift_timer_.stop();
  }
  double integrate_ms() override { return drift_timer_.elapsed_ms() + kick_timer_.elapsed_ms(); }
  Particles& particles() override {
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
  double potential() override { return field_.potential(p_); }
  std::vector<double> accelerations() override { return interleave(a_); }
  std::vector<double> accelerations_of(ForceField& other, std::uint64_t step) override {
    DeviceVectors a(host_.dim, host_.size());
    other.accelerations(p_, step, a);  // in the state's current order, like p_
    return interleave(a);
  }

 private:
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
  gpu::EventTimer drift_timer_, kick_timer_;
};
#endif

}  // namespace

std::unique_ptr<State> make_state(Particles p, ForceField& field) {
  p.add_velocities();
  if (!field.on_device()) return std::make_unique<HostState>(std::move(p), field);
#if defined(NF_HAVE_CUDA)
  return std::make_unique<DeviceState>(std::move(p), field);
#else
  throw std::logic_error("a device force field in a CPU-only build");
#endif
}

}  // namespace nf::sim
