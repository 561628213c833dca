#pragma once
//! Whitespace tables without a header in the Dubinski layout (.tab, .dat, .txt): one particle per
//! row, `mass x y z vx vy vz` (the Dubinski Milky Way/Andromeda set is 81920 such rows).
//!
//! The number of columns decides the layout: 7 = mass x y z vx vy vz, 4 = mass x y z,
//! 5 = mass x y vx vy (2D), 3 = mass x y (2D); every row must have the first row's count.
//! Columns are separated by spaces or tabs; CR LF line ends, blank lines and lines starting with
//! '#' are accepted; the last line may lack its newline. An empty table is 0 particles in 3D.

#include <string>
#include <string_view>

#include "core/particles.h"

namespace nf::io {

//! Reads a table; throws InputError naming the file, the line and the problem (column count,
//! a field that is not a number, NaN/inf, negative mass).
Particles read_table(const std::string& path);

//! The table `text` as read_table reads it; `path` names it in messages (the fuzz target
//! fuzz/fuzz_table.cc feeds it bytes, docs/design.md §9).
Particles parse_table(const std::string& path, std::string_view text);

//! Writes one row per particle in the layout above (the 7-column Dubinski rows for 3D particles
//! with velocities) with shortest round-trip numbers, so reading it back gives the same doubles;
//! ids and time are not stored. Atomic.
void write_table(const std::string& path, const Particles& p);

}  // namespace nf::io
