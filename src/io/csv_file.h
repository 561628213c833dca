#pragma once
//! Particle and acceleration CSV files (docs/design.md §5).
//!
//! Input: a header row naming x, y[, z] and m (or mass); optional id, vx, vy[, vz]; other columns
//! are ignored. A z column makes the file 3D. Numbers are converted with std::from_chars, so every
//! decimal reads to the nearest double. Errors name the file, the line and the problem.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/particles.h"

namespace nf {

//! Reads a particle file; throws InputError on any problem (nothing is partially returned).
Particles read_particles_csv(const std::string& path);
//! The CSV `text` as read_particles_csv reads a file; `path` names it in messages (the fuzz
//! target fuzz/fuzz_csv.cc feeds it bytes, docs/design.md §9).
Particles parse_particles_csv(const std::string& path, std::string_view text);

//! Writes x,y[,z],m[,id][,vx,vy[,vz]] with shortest round-trip numbers (by io/output_file.h's rules).
void write_particles_csv(const std::string& path, const Particles& p);

//! Writes id,ax,ay[,az]: one row per particle in input order (by io/output_file.h's rules). `acc`
//! holds dim values per particle.
void write_accelerations_csv(const std::string& path, const Particles& p, const std::vector<double>& acc);

//! Accelerations as `forces` writes them (id,ax,ay[,az]), in file order.
struct Accelerations {
  int dim = 2;
  std::vector<std::int64_t> id;
  std::vector<double> acc;  //!< dim values per row
};

//! Reads an accelerations file; errors (InputError) name the file, the line and the problem,
//! repeated ids included.
Accelerations read_accelerations_csv(const std::string& path);
//! The accelerations CSV `text`, as read_accelerations_csv reads a file.
Accelerations parse_accelerations_csv(const std::string& path, std::string_view text);

}  // namespace nf
