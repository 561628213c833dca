#pragma once
//! Tipsy particle files (.tipsy, .std), as docs/design.md §13.
//!
//! Header: float64 time, int32 nbodies, ndim, nsph, ndark, nstar, then an int32 pad (32 bytes; some
//! writers leave the pad out: 28 bytes). Then nsph gas records (48 bytes: mass, pos[3], vel[3],
//! rho, temp, hsmooth, metals, phi), ndark dark records (36 bytes: mass, pos[3], vel[3], eps,
//! phi) and nstar star records (44 bytes: mass, pos[3], vel[3], metals, tform, eps, phi), all
//! float32. Standard files are big-endian (XDR); native little-endian files exist too.

#include <cstdint>
#include <string>

#include "core/particles.h"
#include "io/byte_order.h"

namespace nf::io {

//! What a Tipsy header said, for callers that want more than the particles.
struct TipsyInfo {
  ByteOrder order = ByteOrder::big;
  int header_bytes = 32;  //!< 32 (with the pad) or 28
  std::int64_t nsph = 0, ndark = 0, nstar = 0;
};

//! Reads every particle -- gas, then dark, then star records, in file order -- as float64.
//! The byte order is the one in which ndim is 2 or 3 and the counts add up to nbodies; the header
//! size is the one that makes the file size match the counts exactly. ndim = 2 gives 2D particles
//! (z and vz must then be 0). Velocities that are all zero read as absent (a file without
//! velocities written by write_tipsy). Only mass, position and velocity are kept (no ids: a
//! Tipsy file has none). Throws InputError naming the file and what is wrong: a truncated file
//! names the record it ends in, with the expected and the actual size.
Particles read_tipsy(const std::string& path, TipsyInfo* info = nullptr);

//! How write_tipsy lays out the file.
struct TipsyWriteOptions {
  ByteOrder order = ByteOrder::big;  //!< big = the standard XDR file; little = native (cuda-samples)
  bool padded_header = true;         //!< 32-byte header (standard) or 28 bytes
};

//! Writes every particle as a dark-matter record (eps = phi = 0), positions and velocities as
//! float32 (z = 0 in 2D, zero velocities when there are none), p.time in the header (io/output_file.h).
//! Throws UsageError when a value does not fit a float32 or N exceeds 2^31 - 1.
void write_tipsy(const std::string& path, const Particles& p, const TipsyWriteOptions& opt = {});

}  // namespace nf::io
