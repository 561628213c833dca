#pragma once
//! The files of a simulation's output folder (docs/design.md §12):
//!   run.ini             what the run is (kernel, dt, ...): --resume refuses a run that differs
//!   snap_NNNNNN.EXT     snapshots, step number zero-padded to 6
//!   frame_NNNNNN.png    pictures (--render-every)
//!   energy.csv          diagnostics at the snapshot steps
//! Every file is written under a temporary name and renamed, so an interrupted run leaves only
//! complete files.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "io/particle_file.h"

namespace nf::sim {

//! "snap_000042.csv" (the format's name is the extension).
std::string snapshot_name(std::uint64_t step, io::FileFormat f);
//! "frame_000042.png".
std::string frame_name(std::uint64_t step);
//! Steps of the snapshots in `dir` in format f, ascending (names that do not parse are ignored).
std::vector<std::uint64_t> snapshot_steps(const std::string& dir, io::FileFormat f);

//! DIR/run.ini: `key = value` lines in a fixed order, `#` comments.
class RunDescription {
 public:
  //! Sets (or replaces) a key, keeping the order of first setting.
  void set(const std::string& key, const std::string& value);
  //! The value, or "" when the key is absent.
  std::string get(const std::string& key) const;
  bool has(const std::string& key) const;
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }
  //! Writes the file atomically, with a comment line first.
  void write(const std::string& path) const;
  //! Reads a file; InputError naming the file and line for a line that is not `key = value`.
  static RunDescription read(const std::string& path);

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

//! One row of energy.csv.
struct EnergyRow {
  std::uint64_t step = 0;
  double time = 0, kinetic = 0, potential = 0, total = 0, rel_energy_error = 0;
  double px = 0, py = 0, pz = 0;
  double force_rel_error = std::numeric_limits<double>::quiet_NaN();  //!< sub-sampled runs only
};

//! energy.csv: `#` lines saying what the forces and the potential are, the header
//! step,time,kinetic,potential,total,rel_energy_error,px,py,pz,force_model[,force_rel_error], one
//! row per diagnostics step; rewritten atomically after every row (it is small).
class EnergyLog {
 public:
  //! `subsampled` adds the force_rel_error column (sub-sampled against exact accelerations).
  EnergyLog(std::string path, std::vector<std::string> comments, std::string force_model, bool subsampled);
  //! Keeps the rows of the existing file with step < `before` (a resumed run); InputError naming
  //! the file and line when it is malformed or lacks the step-0 row while `before` > 0.
  void load(std::uint64_t before);
  //! Fills the row's total and relative error (E0: the step-0 row) and appends it.
  void add(EnergyRow r);
  const std::vector<EnergyRow>& rows() const { return rows_; }

 private:
  void write() const;
  std::string path_, force_model_;
  std::vector<std::string> comments_;
  bool subsampled_;
  std::vector<EnergyRow> rows_;
};

//! Reads energy.csv rows (skipping `#` lines) as written by EnergyLog; InputError on a bad line.
std::vector<EnergyRow> read_energy_csv(const std::string& path);

}  // namespace nf::sim
