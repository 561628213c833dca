#pragma once
//! Two disk galaxies on a collision orbit (`generate --dist galaxies`), a stand-in for the
//! Dubinski Milky Way/Andromeda initial conditions (which cannot be downloaded here), in the same
//! row order: disk 1, disk 2, bulge 1, bulge 2, halo 1, halo 2 (N = 81920 gives Dubinski's
//! 16384 / 8192 / 16384 particles per galaxy and component).
//!
//! Each galaxy (G = 1, total mass of the pair 1):
//! - disk: exponential surface density exp(-R/R_d) truncated at 6 R_d, sech^2(z/z_d) vertical
//!   profile; circular velocity from the enclosed mass of all three components (spherical
//!   approximation) plus Gaussian scatter of 10% of it in every direction;
//! - bulge and halo: Plummer spheres truncated at 10 scale radii, isotropic Gaussian velocities
//!   with the dispersion of the isotropic Jeans equation in the total (spherical) potential,
//!   speeds capped at 0.95 of the local escape speed.
//! Each galaxy is moved to its own centre of mass and rest, then tilted and put on a bound
//! Keplerian orbit of the two total masses (centre of mass of the pair at rest at the origin).

#include <cstdint>

#include "core/particles.h"

namespace nf {

//! Parameters of the model (defaults used by `generate --dist galaxies`).
struct GalaxyModel {
  double disk_mass = 0.15, bulge_mass = 0.05, halo_mass = 0.8;  //!< fractions of a galaxy's mass (0.5)
  double disk_fraction = 0.4, bulge_fraction = 0.2;              //!< of a galaxy's particles; the halo gets the rest
  double disk_scale = 1.0;          //!< R_d
  double disk_height = 0.1;         //!< z_d
  double bulge_scale = 0.2;         //!< Plummer radius of the bulge
  double halo_scale = 3.0;          //!< Plummer radius of the halo
  double separation = 20.0;         //!< initial distance of the two centres
  double pericentre = 3.0;          //!< of the Keplerian orbit of two point masses
  double eccentricity = 0.9;        //!< < 1: bound
  double tilt1_degrees = 0.0;       //!< galaxy 1's spin axis from +z (the orbit's axis), about x
  double tilt2_degrees = 60.0;      //!< galaxy 2's spin axis from +z, about x
};

//! n particles (n >= 10) of the model, seeded; 3D with velocities. Throws UsageError for bad n
//! or parameters (separation outside [pericentre, apocentre], masses not positive, ...).
Particles make_galaxies(std::int64_t n, std::uint64_t seed, const GalaxyModel& model = {});

}  // namespace nf
