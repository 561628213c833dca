#pragma once
//! Particles as read from a file or made by a generator: float64, structure of arrays, input order.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nf {

//! Positions, masses and optional ids/velocities of N particles in 2 or 3 dimensions.
struct Particles {
  int dim = 3;                     //!< 2 or 3; the file has a z column iff dim == 3
  std::vector<double> x, y, z, m;  //!< z is empty in 2D
  std::vector<std::int64_t> id;    //!< empty: ids are the 0-based row numbers
  std::vector<double> vx, vy, vz;  //!< empty unless the source had velocities (kept for round trips)
  double time = 0.0;               //!< simulation time of a snapshot (Tipsy header, .bin); 0 otherwise

  std::size_t size() const { return m.size(); }
  //! Coordinate `axis` (0 = x, 1 = y, 2 = z) of particle i.
  double coord(std::size_t i, int axis) const { return axis == 0 ? x[i] : axis == 1 ? y[i] : z[i]; }
  //! The id written next to particle i's output row.
  std::int64_t id_of(std::size_t i) const { return id.empty() ? static_cast<std::int64_t>(i) : id[i]; }
  bool has_velocities() const { return !vx.empty(); }
  //! Largest mass (0 for no particles).
  double max_mass() const;
  //! Resizes every present array to n particles (velocities only if present).
  void resize(std::size_t n);
  //! Adds zero velocities if there are none (a simulation starts from rest where the file had none).
  void add_velocities();
  //! Throws std::logic_error unless every present array holds size() values (writers check this).
  void check_sizes() const;
  //! Where ids repeat: {i, j} with id[i] == id[j], i < j, j the first row that repeats one; {0, 0}
  //! when every id is distinct (or there are none). Ids name particles in every output, so files
  //! that store them (csv, bin) refuse repeats on reading and on writing alike.
  std::pair<std::size_t, std::size_t> repeated_id() const;
};

//! A writer's check of files that store ids (csv, bin): UsageError "cannot write PATH: ..." naming
//! the first repeat (Particles::repeated_id), so that nothing is written that would not read back.
void refuse_repeated_ids(const std::string& path, const Particles& p);

//! Scalar type of a kernel's arithmetic. float32 is the GPU default, as in the paper.
enum class Precision { f32, f64 };

//! "float" or "double".
const char* to_string(Precision p);
//! Parses "float"/"f32"/"single" or "double"/"f64"; throws UsageError otherwise.
Precision parse_precision(const std::string& text);

}  // namespace nf
