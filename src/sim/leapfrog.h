#pragma once
//! The leapfrog of `simulate` (docs/design.md §12): kick-drift-kick over any force method's state,
//! step after step, with hooks for what a run does between steps (outputs, costs, progress).

#include <cstdint>
#include <functional>

#include "sim/state.h"
#include "sim/step_costs.h"

namespace nf::sim {

//! The steps a leapfrog runs.
struct LeapfrogSteps {
  double dt = 0;
  std::uint64_t first = 0;  //!< the state's step: the steps run are first + 1 .. last
  std::uint64_t last = 0;
  //! M > 0: the state returns to input order before the forces of every step on the grid of M
  //! (the snapshot grid: a run resumed from such a snapshot sums its forces in the same order).
  std::int64_t input_order_every = 0;
};

//! What the leapfrog calls besides the integration (each may be empty).
struct LeapfrogHooks {
  //! The state of `step` is complete (positions, velocities, forces): whatever is written at that
  //! step. Called for `first` and after every step.
  std::function<void(std::uint64_t step)> outputs;
  //! Once, after the outputs of `first` and before the first step (starts a progress clock).
  std::function<void()> begin;
  //! Step `step` and its outputs are done; `cost`: what the step cost (its outputs excluded).
  std::function<void(std::uint64_t step, const StepCost& cost)> stepped;
};

//! From the state at step `first` (its forces computed here) to step `last`: per step
//! v += a dt/2, x += v dt, a = F(x), v += a dt/2, in float64 (State), then the hooks.
void leapfrog(State& state, const LeapfrogSteps& steps, const LeapfrogHooks& hooks);

}  // namespace nf::sim
