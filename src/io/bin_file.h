#pragma once
//! nearfield's own binary particle file, `.bin`: exact float64 state, read at disk speed.
//!
//! Layout (version 1, every value little-endian):
//!
//!     offset  size  field
//!          0     8  magic "NFBIN\r\n\x1a" (4E 46 42 49 4E 0D 0A 1A: text-mode transfers break it)
//!          8     4  uint32 version = 1
//!         12     4  uint32 dim, 2 or 3
//!         16     8  uint64 N, particles
//!         24     4  uint32 fields: bit 0 ids present, bit 1 velocities present (other bits 0)
//!         28     4  uint32 reserved, 0
//!         32     8  float64 time of the snapshot
//!         40        arrays of N values each, in this order: x, y, [z], m (float64),
//!                   [id (int64)], [vx, vy, [vz] (float64)]
//!
//! The file is exactly 40 + 8 N (dim + 1 + ids + dim * velocities) bytes; anything else is refused.

#include <cstdint>
#include <string>

#include "core/particles.h"

namespace nf::io {

//! Size in bytes of the fixed header that precedes the arrays.
constexpr std::uint64_t kBinHeaderBytes = 40;
//! The format version this build reads and writes.
constexpr std::uint32_t kBinVersion = 1;

//! Reads a .bin file; throws InputError naming the file and the problem (bad magic, version,
//! header fields, a size that does not match the header, NaN/inf or negative mass) -- nothing
//! is returned in part. Arrays are read in large blocks straight into the particle vectors.
Particles read_bin(const std::string& path);

//! Writes a .bin file by io/output_file.h's rules; p is stored bit for bit.
void write_bin(const std::string& path, const Particles& p);

}  // namespace nf::io
