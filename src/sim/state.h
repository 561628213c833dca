#pragma once
//! The state of a simulation (positions, velocities, masses, accelerations) where its force method
//! wants it: host arrays for host methods, device arrays for device methods, which then stay on
//! the GPU from the first step to the last; the host sees them only through `particles()`.

#include <cstdint>
#include <memory>
#include <vector>

#include "core/particles.h"
#include "methods/force_method.h"

namespace nf::sim {

//! Leapfrog state. Velocities and positions are float64 on both sides.
class State {
 public:
  virtual ~State() = default;
  //! a = the method's accelerations of the current positions (`step` picks a sub-sample's offset).
  virtual void compute_accelerations(std::uint64_t step) = 0;
  //! v += a h (a device state may defer it: see complete()).
  virtual void kick(double h) = 0;
  //! v += a h, then x += v dt.
  virtual void kick_drift(double h, double dt) = 0;
  //! The particles as they are now (copied from the GPU for a device state); ids, masses and the
  //! dimension as given at the start.
  virtual Particles& particles() = 0;
  //! Potential energy over the method's pairs at the current positions (after
  //! compute_accelerations): on the CPU in float64 for a host state, on the GPU for a device state.
  virtual double potential() = 0;
  //! The current accelerations on the host, dim values per particle, input order.
  virtual std::vector<double> accelerations() = 0;
  //! The accelerations another method (same kind: host or device) gives the current positions.
  virtual std::vector<double> accelerations_of(ForceMethod& other, std::uint64_t step) = 0;
  //! Device states that a method moved into its tree's order (ForceMethod::prepare_in_place)
  //! go back to input order; host states are always in input order. The simulation calls it
  //! before the force evaluation of every step on the snapshot grid, so that a run resumed from
  //! such a snapshot (read in input order) evaluates the same forces in the same order, bit for bit.
  virtual void restore_input_order() {}
  //! Milliseconds of the integration since the last call (the last kick_drift plus any kick
  //! applied; CUDA events on the GPU). Waits until the step's work is complete.
  virtual double integrate_ms() = 0;
  //! Applies any deferred kick: a device state may hold a step's closing kick back and apply it
  //! with the next step's opening kick in one pass (docs/design.md §12); particles() and
  //! accelerations() apply it first, and a run calls this after its last step.
  virtual void complete() {}
  ForceMethod& method() { return method_; }

 protected:
  explicit State(ForceMethod& method) : method_(method) {}
  ForceMethod& method_;
};

//! A state for `method` starting from p (velocities zero where p has none).
std::unique_ptr<State> make_state(Particles p, ForceMethod& method);

}  // namespace nf::sim
