#pragma once
//! The force-method interface: the one way every command (forces, validate, bench, experiment,
//! simulate) and every test runs a kernel (docs/design.md §17). A method is made once for a kind
//! of particles (dimension, N, masses) and a setup; then, for each set of positions,
//!   prepare(positions)  builds what it needs before evaluating: tree, lists, plan;
//!   evaluate()          zeroes its output and runs its stages, each ADDING into it;
//!   accelerations()     returns the result in input order.
//! Bench repeats evaluate() on one prepare; a simulation prepares and evaluates every step. Each
//! kernel family (CPU or GPU, near field or all pairs; the far field next) is one class behind
//! this interface, and a layer such as distributed/ wraps methods without the methods knowing.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device_arrays.h"
#include "core/gpu_runtime.h"
#include "core/particles.h"
#include "core/timing.h"
#include "nearfield/box_scope.h"
#include "tree/domain.h"

namespace nf {

struct KernelInfo;
struct OrderSearch;

//! Which pairs an all-pairs method computes: all of them, or only the near field at a level.
enum class Mask { all, near };
const char* to_string(Mask m);
Mask parse_mask(const std::string& text);

//! Everything about a force evaluation except the particles.
struct MethodSetup {
  int level = 0;                  //!< tree level (near-field methods, the near mask, the FMM's leaf level)
  std::optional<Domain> domain;   //!< the boxes' domain; unset: each prepare's default domain (positions move)
  double softening = 1e-4;        //!< eps
  Precision precision = Precision::f32;
  Mask mask = Mask::all;          //!< all-pairs methods only
  bool round_inputs_to_float = false;  //!< float64 arithmetic on float32-rounded inputs (references)
  bool count_interactions = false;     //!< counting mode: near-field kernels count what they evaluate
  //! All-pairs methods: k > 1 uses every k-th source (offset = step mod k), masses times k (the
  //! "approximation" of a sub-sampled sum); near-field methods refuse it.
  int subsample = 1;
  BoxScope scope;  //!< near-field methods: the boxes computed (all, unless a part of a larger evaluation)
  // The full methods (near field plus far field, docs/design.md §16):
  int order = 0;          //!< the expansions' order p (1..20); 0: from `accuracy`
  double accuracy = 0;    //!< target relative L2 error of the accelerations; 0: the default, 1e-4
  std::string near;       //!< the near-field kernel of the direct part; empty: the device's default
  //! The adaptive full methods: a box is split while it holds more than this many particles
  //! (tree/adaptive.h); 0: the automatic size (methods/full_level_rule.h: auto_leaf_size).
  std::uint32_t leaf_size = 0;
  //! Full methods without an order (order 0): M >= 2 chooses the order by measuring the error at M
  //! sampled targets of the particles the method is made for (measure/order_search.h:
  //! make_measured_method, through make_spread_method); 0: the order comes from the error model.
  std::uint32_t order_sample = 0;
  //! Called with the fraction of an evaluation done (0..1), on the evaluating thread between pieces
  //! of work, by methods that cut their work into pieces (cpu-allpairs: blocks of targets, the
  //! same sums); empty: no calls. A long `forces` run shows it (cli/long_run.h).
  std::function<void(double)> progress;
};

//! Which forces a method computes.
enum class ForceModel {
  all_pairs,   //!< every pair: the exact softened dynamics
  subsampled,  //!< every k-th source per step, masses times k
  near_field,  //!< only pairs in the same or adjacent boxes: the near-field part of the force
  fmm,         //!< every pair: the near field directly, the far field through expansions of order p
};
//! "all-pairs", "subsampled", "near-field" or "fmm" (energy.csv's force_model column).
const char* to_string(ForceModel m);

//! One named part of a method's work, in milliseconds.
struct Stage {
  std::string name;
  double ms = 0;
};

//! Where the time of the last prepare and evaluation went (CUDA events on the GPU, the steady
//! clock on the CPU). Stage names are results-file column stems ("tree" -> tree_ms).
struct StageTimes {
  std::vector<Stage> prepare;   //!< "tree", "plan", "transfer" (bodies gathered and uploaded, accelerations scattered)
  double evaluate_ms = 0;       //!< one evaluation, from the first to the last stage (the zeroing excluded)
  std::vector<Stage> evaluate;  //!< its parts where a method reports them (they may overlap)
  //! The stage's time in `prepare` or `evaluate` (0 when absent).
  double get(const std::string& name) const;
};

//! A named count of the last evaluation (for example bodies moved between devices).
struct Count {
  std::string name;
  std::uint64_t value = 0;
};

//! One force method (see the top of this file).
class ForceMethod {
 public:
  virtual ~ForceMethod() = default;
  ForceMethod(const ForceMethod&) = delete;
  ForceMethod& operator=(const ForceMethod&) = delete;

  //! True: the method computes on a GPU and also takes device positions (prepare(DeviceParticles)).
  virtual bool on_device() const = 0;

  //! Takes positions: the dimension, N and masses the method was made for. Builds the tree, lists
  //! and plan it needs; `step` picks a sub-sample's sources (offset = step mod k).
  virtual void prepare(const Particles& p, std::uint64_t step = 0) = 0;
  //! Device methods: the same from positions on the device.
  virtual void prepare(const DeviceParticles& p, std::uint64_t step = 0);
  //! Device methods, the simulation's path: a method that sorts the particles (near field) may
  //! move the whole state into its order instead of gathering and scattering through a random
  //! permutation every step: it then permutes p, the velocities v and `index` (the state's row ->
  //! input row) alike, and returns true; accelerations(DeviceVectors&) is then in that order.
  //! Default: prepare(p, step), nothing moved, false.
  virtual bool prepare_in_place(DeviceParticles& p, DeviceVectors& v, gpu::DeviceBuffer<std::uint32_t>& index,
                                std::uint64_t step);

  //! One force evaluation of the prepared positions: the output is zeroed, then every stage adds
  //! into it. On the GPU the work is enqueued; wait(), accelerations() and times() wait for it.
  virtual void evaluate() = 0;
  //! Returns when the last evaluation is complete.
  virtual void wait() {}
  //! Accelerations of the last evaluation, dim values per particle, input order, float64.
  virtual std::vector<double> accelerations() = 0;
  //! Device methods: the same into device vectors (input order, or the state's order after
  //! prepare_in_place moved it).
  virtual void accelerations(DeviceVectors& out);
  //! Device methods after prepare_in_place moved the state: where their own output of the last
  //! evaluation lies on the device, one Acc4<float> or Acc4<double> row per state row (in the
  //! state's order), for a simulation's kicks to read directly; null data when there is none such
  //! (then accelerations(DeviceVectors&) is the way).
  struct StateOrderAcc {
    const void* rows = nullptr;
    bool double_rows = false;
  };
  virtual StateOrderAcc state_order_acc() { return {}; }
  //! Overwrites the output with NaN, so a run that skips a particle cannot pass a test.
  virtual void poison_output() = 0;

  //! Times of the last prepare and evaluation (waits for the evaluation; evaluate_ms 0 before one).
  virtual StageTimes times() = 0;
  //! Counting mode (MethodSetup::count_interactions): interactions the last evaluation evaluated.
  virtual unsigned long long counted_interactions() { return 0; }
  //! Other counts of the last evaluation.
  virtual std::vector<Count> counts() { return {}; }
  //! A full method's near-field kernel (its direct part); empty for other methods.
  virtual std::string near_kernel() const { return ""; }
  //! The longest of `ms` over the processes the method is spread over (docs/design.md §15); in one
  //! process `ms`. A loop that runs the method until a measured time passes must decide with it, so
  //! that every process evaluates as often as the others.
  virtual double slowest(double ms) { return ms; }

  ForceModel model() const { return model_; }
  //! One line on what the forces are ("near field only: ... at level 7; NOT the full dynamics").
  std::string describe() const;
  //! -sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) over the pairs the method computes (all pairs, or the
  //! near field over the setup's domain or p's default one), on the CPU in float64. A sub-sampled
  //! method gives the exact all-pairs potential.
  double potential(const Particles& p) const;
  //! Device methods: the same sum on the GPU over the last prepared positions (pair terms in the
  //! method's precision, sums in float64).
  virtual double device_potential();
  //! How device_potential evaluates (energy.csv's header says it).
  virtual std::string device_potential_method() const;

  const MethodSetup& setup() const { return setup_; }

  //! The search that chose this method's order (MethodSetup::order_sample), or null.
  const OrderSearch* order_search() const { return order_search_.get(); }
  void set_order_search(std::shared_ptr<const OrderSearch> search) { order_search_ = std::move(search); }

 protected:
  ForceMethod(ForceModel model, MethodSetup setup) : model_(model), setup_(std::move(setup)) {}
  ForceModel model_;
  MethodSetup setup_;

 private:
  std::shared_ptr<const OrderSearch> order_search_;
};

//! A method on the CPU: evaluate runs to completion, timed on the steady clock. Subclasses
//! implement clear_output (zero) and compute (the stages, adding).
class HostMethod : public ForceMethod {
 public:
  bool on_device() const override { return false; }
  void evaluate() final;

 protected:
  using ForceMethod::ForceMethod;
  virtual void clear_output() = 0;
  virtual void compute() = 0;
  //! Milliseconds of the last evaluation's compute.
  double evaluate_ms() const { return evaluate_ms_; }

 private:
  double evaluate_ms_ = 0;
};

//! A method on the GPU of the current device: evaluate enqueues clear_output, then compute between
//! two CUDA events (read by evaluate_ms(), which waits). prepare(Particles) uploads the positions
//! and calls prepare(DeviceParticles).
class DeviceMethod : public ForceMethod {
 public:
  bool on_device() const override { return true; }
  void prepare(const Particles& p, std::uint64_t step = 0) override;
  using ForceMethod::prepare;
  void evaluate() final;
  void wait() override;

 protected:
  DeviceMethod(ForceModel model, MethodSetup setup);
  virtual void clear_output() = 0;
  virtual void compute() = 0;
  //! Milliseconds of the last evaluation's compute (waits for it); 0 before the first.
  double evaluate_ms();
  //! Milliseconds of the last prepare(Particles)'s upload (0 after prepare(DeviceParticles)).
  double upload_ms() const { return upload_ms_; }

 private:
  DeviceParticles uploaded_;  // prepare(Particles)'s copy of the positions
  double upload_ms_ = 0;
  std::unique_ptr<gpu::Event> start_, stop_;
  bool evaluated_ = false;
};

//! Refuses (UsageError) a setup kernel k cannot take, before any work: a softening that is negative
//! or not finite, --subsample below 1, or with a near-field kernel or the near mask, counting mode
//! with an all-pairs kernel, a GPU kernel without a GPU. The one place these are checked.
void check_setup(const KernelInfo& k, const MethodSetup& s);
//! The same, and for particles like `like`: a dimension other than 2 or 3, a level the kernel's
//! tree cannot take (depth, memory).
void check_setup(const KernelInfo& k, const MethodSetup& s, const Particles& like);

//! Refuses an --accuracy below the error model's best (order kMaxOrder) at leaf level `level` of
//! a `dim`-dimensional full method whose order comes from the accuracy (the model's error grows
//! with the level: a sweep checks every level it lists before its first point).
//! `adaptive`: for an adaptive method, whose model in 3D does not follow the level
//! (farfield::kAdaptiveMargin3): checked at any level there, resolved or not. `particles` (0: not
//! known yet) adds the model's factor for sparse trees (farfield::sparse_factor).
void check_accuracy_reachable(int dim, int level, double accuracy, bool adaptive = false, std::uint64_t particles = 0);
//! Kernel k's method for setup `s` and particles like `like` (dimension, N and masses), through
//! its registry factory, after check_setup. A full method whose order is to be measured
//! (s.order_sample > 0) is made by measure/order_search.h's make_measured_method (which
//! distributed/spread_method.h's make_spread_method calls); here it is a logic error.
std::unique_ptr<ForceMethod> make_method(const KernelInfo& k, const MethodSetup& s, const Particles& like);

//! Throws std::runtime_error naming the first particle whose acceleration (of `acc`, dim values a
//! particle) is not finite: the force overflowed the kernel's precision (pairs so close, or masses
//! so large, that m / d^3 passes its range). `forces` and the Python forces() write none then.
void check_finite_accelerations(const std::vector<double>& acc, const Particles& p, Precision precision);
//! Why forces of `precision` come out infinite and what to do, for the messages of
//! check_finite_accelerations and of simulate (a force passed the precision's range).
std::string overflow_advice(Precision precision);

}  // namespace nf
