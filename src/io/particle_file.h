#pragma once
//! Particle files in every format nearfield reads and writes (docs/design.md §13), chosen by
//! extension or by name. This is the entry point for commands: read_particles / write_particles.
//!
//! | format | extensions     | holds                                              |
//! | csv    | .csv           | x,y[,z],m + optional id, velocities (csv_io.h)     |
//! | tipsy  | .tipsy, .std   | float32 mass, position, velocity (tipsy.h)         |
//! | tab    | .tab .dat .txt | mass x y z vx vy vz rows, Dubinski layout (table.h)|
//! | bin    | .bin           | everything, float64, exact (bin_file.h)            |

#include <optional>
#include <string>
#include <vector>

#include "core/particles.h"

namespace nf::io {

//! A particle file format.
enum class FileFormat { csv, tipsy, table, bin };

//! "csv", "tipsy", "tab" or "bin" (the names --format takes).
const char* to_string(FileFormat f);
//! "csv, tipsy, tab, bin", for help texts and messages.
const char* file_format_names();
//! Parses a format name (also "table", "dubinski" for tab, "std" for tipsy); UsageError otherwise.
FileFormat parse_file_format(const std::string& name);
//! The extension of `path`'s last component, lower case, without its dot ("" when it has none).
std::string extension_of(const std::string& path);
//! The format of `path` by its extension (case-insensitive), if it names one.
std::optional<FileFormat> known_file_format(const std::string& path);
//! The format of `path` by its extension; UsageError for an unknown one.
FileFormat file_format_of(const std::string& path);
//! `format_name` if given (non-empty), else the format of `path`.
FileFormat resolve_file_format(const std::string& path, const std::string& format_name);

//! Reads `path` in `format_name` (empty: by extension); InputError naming the file on bad input.
Particles read_particles(const std::string& path, const std::string& format_name = "");
//! Reads `path` in format f.
Particles read_particles(const std::string& path, FileFormat f);
//! Writes `p` to `path` in `format_name` (empty: by extension) (io/output_file.h).
void write_particles(const std::string& path, const Particles& p, const std::string& format_name = "");
//! Writes `p` to `path` in format f (io/output_file.h).
void write_particles(const std::string& path, const Particles& p, FileFormat f);

//! What writing p in format f loses, one phrase each ("ids", "time", "float64 precision"); empty
//! when the file reads back to the same particles. Ids equal to the row numbers are not lost
//! (they are what a file without ids means). Commands print these, so nothing is dropped silently.
std::vector<std::string> fields_not_stored(const Particles& p, FileFormat f);
//! "note: PATH (FORMAT) does not store: a, b\n", or "" when nothing is lost.
std::string storage_note(const std::string& path, const Particles& p, FileFormat f);

}  // namespace nf::io
