// The leapfrog, kick-drift-kick (sim/leapfrog.h, docs/design.md §12).
#include "sim/leapfrog.h"

#include "core/timing.h"

namespace nf::sim {

void leapfrog(State& state, const LeapfrogSteps& steps, const LeapfrogHooks& hooks) {
  const auto on_grid = [&](std::uint64_t s) {
    return steps.input_order_every > 0 && s % std::uint64_t(steps.input_order_every) == 0;
  };
  const double half = 0.5 * steps.dt;
  state.compute_accelerations(steps.first);
  if (hooks.outputs) hooks.outputs(steps.first);
  if (hooks.begin) hooks.begin();
  for (std::uint64_t s = steps.first + 1; s <= steps.last; ++s) {
    const Stopwatch clock;
    state.kick_drift(half, steps.dt);                  // v += a dt/2, x += v dt
    if (on_grid(s)) state.restore_input_order();       // a resume from this step's snapshot sums alike
    state.compute_accelerations(s);                    // a = F(x)
    state.kick(half);                                  // v += a dt/2
    const double integrate_ms = state.integrate_ms();  // waits for the step's work
    const double wall_ms = clock.ms();
    const StepCost cost = step_cost(wall_ms, integrate_ms, state.method().times());
    if (hooks.outputs) hooks.outputs(s);
    if (hooks.stepped) hooks.stepped(s, cost);
  }
  state.complete();  // the last step's closing kick, if deferred
}

}  // namespace nf::sim
