#pragma once
//! Validation against the float64 ground truth (DESIGN.md section 4).

#include <string>
#include <vector>

#include "core/particles.h"
#include "methods/evaluation.h"

namespace nf {

//! Accuracy of one kernel's accelerations against a reference.
struct Metrics {
  double rel_l2 = 0;    //!< ||a - ref|| / ||ref|| over all particles
  double max_rel = 0;   //!< max_i |a_i - ref_i| / max(|ref_i|, 1e-6 rms|ref|)
  double momentum = 0;  //!< |sum m_i a_i| / sum |m_i a_i| of the kernel's own output
  bool finite = true;   //!< no NaN or inf anywhere in the output
};

//! Compares `a` with `ref` (dim values per particle); `masses` weight the momentum residual.
//! The per-particle denominator is floored at 1e-6 of the RMS reference magnitude so particles
//! whose forces cancel to rounding noise (lattice centres) do not dominate the maximum.
Metrics compare(const std::vector<double>& a, const std::vector<double>& ref, const std::vector<double>& masses, int dim);

//! Relative L2 tolerance: 1e-5 for float32 kernels, 1e-12 for float64.
double tolerance(Precision p);
//! Finite, and within the tolerance (NaN never passes).
bool passes(const Metrics& m, Precision p);

//! Ground truth for kernels of precision `p`: float64 arithmetic on the inputs those kernels
//! see (float32-rounded for float kernels), near field at setup.level with box membership from
//! the original coordinates. cpu-allpairs up to `cpu_limit` particles (or without a GPU), else
//! allpairs-tiled on the GPU. `name` receives a description of what was used.
std::vector<double> ground_truth(const Particles& p, const ForceSetup& setup, Precision kernel_precision,
                                 std::size_t cpu_limit, std::string& name);

//! Masses as a kernel of precision p sees them (for the momentum residual).
std::vector<double> masses_as_seen(const Particles& p, Precision precision);

}  // namespace nf
