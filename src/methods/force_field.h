#pragma once
//! Force fields: a kernel from the registry driving a simulation. Where an Evaluation computes the
//! forces of one fixed input (forces, validate, bench), a force field is made once and then asked
//! for the accelerations of new positions every step: it rebuilds the tree, re-plans and runs the
//! kernel. Every kernel family makes one (KernelFamily::make_field):
//! - host fields (CPU kernels) take Particles and return host arrays;
//! - device fields (GPU kernels) take DeviceParticles that stay on the GPU between steps and
//!   write float64 accelerations, in input order, into device arrays: the host sees nothing.
//! A field also evaluates the potential energy over the pairs it computes (the diagnostics).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/particles.h"
#include "methods/field_gpu.h"
#include "methods/registry.h"
#include "tree/tree_gpu.h"

namespace nf {

//! What a simulation asks of its kernel besides the particles.
struct FieldSetup {
  int level = 0;              //!< near-field kernels: the tree level (boxes over each step's default domain)
  double softening = 1e-4;    //!< eps
  Precision precision = Precision::f32;
  //! All-pairs kernels: k > 1 uses every k-th source (offset = step mod k), masses times k (the
  //! "approximation" of 001_d513da1f99233eaa.txt). Near-field kernels refuse k > 1.
  int subsample = 1;
  //! > 1: a GPU near-field kernel spread over this many GPUs (distributed/multi_gpu.h) through
  //! make_evaluation_field: a host field, positions pass through the host every step.
  int gpus = 1;
};

//! Milliseconds the last `accelerations` call spent in each part (CUDA events on the GPU, the
//! steady clock on the CPU).
struct FieldTimes {
  double tree = 0;      //!< tree build (0 for all-pairs kernels)
  double plan = 0;      //!< the kernel's plan (work lists from the tree)
  double forces = 0;    //!< the force kernel itself
  double transfer = 0;  //!< bodies packed/gathered for the kernel, accelerations scattered back
};

//! Which forces a field computes.
enum class FieldModel {
  all_pairs,   //!< every pair: the exact softened dynamics
  subsampled,  //!< every k-th source per step, masses times k
  near_field,  //!< only pairs in the same or adjacent boxes: the near-field part of the force
};
//! "all-pairs", "subsampled" or "near-field" (energy.csv's force_model column).
const char* to_string(FieldModel m);

//! One kernel following moving particles.
class ForceField {
 public:
  virtual ~ForceField() = default;
  //! True: call the DeviceParticles overloads; false: the Particles ones.
  virtual bool on_device() const = 0;
  //! Host fields: the accelerations of p's positions, dim values per particle in input order.
  //! `step` picks the sub-sample's offset (step mod k).
  virtual void accelerations(const Particles& p, std::uint64_t step, std::vector<double>& acc);
  //! Device fields: the positions of p changed on the device; writes the accelerations (input
  //! order, float64) into acc, on the device.
  virtual void accelerations(const DeviceParticles& p, std::uint64_t step, DeviceVectors& acc);
  //! Device fields, the simulation's path: the same accelerations, but a field that sorts the
  //! particles into a tree (near-field kernels) may move the state into the tree's order instead
  //! of gathering the bodies and scattering the accelerations through a random permutation every
  //! step: it then permutes p (x, y, z, m), the velocities v and `index` (the state's row -> input
  //! row) alike, writes acc in that order, and returns true. The next step's sort then finds the
  //! particles almost in place, and its gathers read memory in order. Default: accelerations(p,
  //! step, acc), nothing moved, false.
  virtual bool accelerations_moving(DeviceParticles& p, std::uint64_t step, DeviceVectors& acc, DeviceVectors& v,
                                    gpu::DeviceBuffer<std::uint32_t>& index);
  //! -sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) over the pairs the field's kernel computes: all pairs,
  //! or the near field at the level over the boxes of p's default domain (the boxes the last
  //! `accelerations` call used, if it was given these positions). A sub-sampled field gives the
  //! exact all-pairs potential. On the CPU in float64, for host and device fields alike.
  double host_potential(const Particles& p) const;
  //! Device fields: the same sum on the GPU over the boxes of the last `accelerations` call (which
  //! must have been given these particles): pair terms in the field's precision, sums in float64.
  virtual double potential(const DeviceParticles& p);
  //! How `potential(DeviceParticles)` evaluates (energy.csv's header says it).
  virtual std::string potential_method() const;

  FieldModel model() const { return model_; }
  //! One line on what the forces are ("near field only: pairs in the same or adjacent boxes at level 7").
  std::string describe() const;
  //! Times of the last `accelerations` call. Device fields read their CUDA events here, not during
  //! the call, so a step is not stalled by its timing; ask after the step is complete.
  virtual FieldTimes times() { return times_; }

 protected:
  ForceField(FieldModel model, const FieldSetup& setup) : model_(model), setup_(setup) {}
  FieldModel model_;
  FieldSetup setup_;
  FieldTimes times_;
};

//! The force field of kernel k for particles like `initial` (dimension, N and masses fixed). Refuses
//! (UsageError) a kernel that cannot drive a simulation, a GPU kernel without a GPU, --subsample
//! with a near-field kernel, a level the kernel cannot take, and gpus the kernel or machine cannot
//! serve (multi_gpu.h's check_gpus).
std::unique_ptr<ForceField> make_force_field(const KernelInfo& k, const Particles& initial, const FieldSetup& setup);

//! A host field (on_device() false) that prepares one evaluation of near-field kernel k
//! (methods/evaluation.h's prepare, so ForceSetup::gpus = setup.gpus) over every step's
//! positions and default domain, runs it and returns its accelerations in input order: the
//! field of the CPU near-field kernels, and of any GPU near-field kernel over several GPUs
//! (setup.gpus > 1: decomposition, uploads, trees and halo exchange every step). Its times: tree
//! and plan as the evaluation reports them (several GPUs: the slowest part's), forces its timed
//! run, transfer the rest of the host's time for the step's forces.
std::unique_ptr<ForceField> make_evaluation_field(const KernelInfo& k, const FieldSetup& setup);

//! Sources every k-th particle from `offset`: how many of n there are.
inline std::size_t subsample_count(std::size_t n, int k, std::size_t offset) {
  return offset >= n ? 0 : (n - offset + std::size_t(k) - 1) / std::size_t(k);
}

}  // namespace nf
