#include "sim/state.h"

#include <chrono>
#include <stdexcept>

#include "common/gpu_runtime.h"
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
// layout the tree builder and the field's packing kernels read.
class DeviceState : public State {
 public:
  DeviceState(Particles p, ForceField& field)
      : State(field), host_(std::move(p)), p_(upload_particles(host_)), v_(host_.dim, host_.size()),
        a_(host_.dim, host_.size()) {
    v_.x.upload(host_.vx);
    v_.y.upload(host_.vy);
    if (host_.dim == 3) v_.z.upload(host_.vz);
  }
  void compute_accelerations(std::uint64_t step) override { field_.accelerations(p_, step, a_); }
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
    host_.x = p_.x.download();
    host_.y = p_.y.download();
    host_.vx = v_.x.download();
    host_.vy = v_.y.download();
    if (host_.dim == 3) {
      host_.z = p_.z.download();
      host_.vz = v_.z.download();
    }
    return host_;
  }
  double potential() override { return field_.potential(p_); }
  std::vector<double> accelerations() override { return interleave(a_); }
  std::vector<double> accelerations_of(ForceField& other, std::uint64_t step) override {
    DeviceVectors a(host_.dim, host_.size());
    other.accelerations(p_, step, a);
    return interleave(a);
  }

 private:
  static std::vector<double> interleave(const DeviceVectors& a) {
    const std::vector<double> x = a.x.download(), y = a.y.download(), z = a.dim == 3 ? a.z.download() : std::vector<double>();
    std::vector<double> out(a.n * a.dim);
    for (std::size_t i = 0; i < a.n; ++i) {
      out[i * a.dim] = x[i];
      out[i * a.dim + 1] = y[i];
      if (a.dim == 3) out[i * a.dim + 2] = z[i];
    }
    return out;
  }

  Particles host_;  // ids, masses, dim; positions and velocities as of the last particles()
  DeviceParticles p_;
  DeviceVectors v_, a_;
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
