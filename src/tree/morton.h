#pragma once
//! Z-order (Morton) box keys, x in the lowest bit: bit d*k + a of the key holds bit k of the
//! coordinate along axis a (paper Fig. 2: at level 2, box (01, 01) is 0011 = 3). Keys are 64-bit
//! (2D to level 31, 3D to level 21); the paper's dense layout, which stops at level 14 / 9, keeps
//! 32-bit box indices (morton_encode / morton_decode), the low half of the same key.

#include <cstdint>

#include "core/hd.h"

namespace nf {

//! Spreads the low 32 bits of v to the even bit positions.
NF_HD NF_INLINE std::uint64_t spread_bits_2(std::uint64_t v) {
  v &= 0x00000000FFFFFFFFull;
  v = (v | (v << 16)) & 0x0000FFFF0000FFFFull;
  v = (v | (v << 8)) & 0x00FF00FF00FF00FFull;
  v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0Full;
  v = (v | (v << 2)) & 0x3333333333333333ull;
  v = (v | (v << 1)) & 0x5555555555555555ull;
  return v;
}

//! Inverse of spread_bits_2.
NF_HD NF_INLINE std::uint32_t compact_bits_2(std::uint64_t v) {
  v &= 0x5555555555555555ull;
  v = (v | (v >> 1)) & 0x3333333333333333ull;
  v = (v | (v >> 2)) & 0x0F0F0F0F0F0F0F0Full;
  v = (v | (v >> 4)) & 0x00FF00FF00FF00FFull;
  v = (v | (v >> 8)) & 0x0000FFFF0000FFFFull;
  v = (v | (v >> 16)) & 0x00000000FFFFFFFFull;
  return static_cast<std::uint32_t>(v);
}

//! Spreads the low 21 bits of v to every third bit position.
NF_HD NF_INLINE std::uint64_t spread_bits_3(std::uint64_t v) {
  v &= 0x00000000001FFFFFull;
  v = (v | (v << 32)) & 0x001F00000000FFFFull;
  v = (v | (v << 16)) & 0x001F0000FF0000FFull;
  v = (v | (v << 8)) & 0x100F00F00F00F00Full;
  v = (v | (v << 4)) & 0x10C30C30C30C30C3ull;
  v = (v | (v << 2)) & 0x1249249249249249ull;
  return v;
}

//! Inverse of spread_bits_3.
NF_HD NF_INLINE std::uint32_t compact_bits_3(std::uint64_t v) {
  v &= 0x1249249249249249ull;
  v = (v | (v >> 2)) & 0x10C30C30C30C30C3ull;
  v = (v | (v >> 4)) & 0x100F00F00F00F00Full;
  v = (v | (v >> 8)) & 0x001F0000FF0000FFull;
  v = (v | (v >> 16)) & 0x001F00000000FFFFull;
  v = (v | (v >> 32)) & 0x00000000001FFFFFull;
  return static_cast<std::uint32_t>(v);
}

//! Morton key of the box with integer coordinates c[0..D) (each below 2^31 in 2D, 2^21 in 3D).
template <int D>
NF_HD NF_INLINE std::uint64_t morton_key(const std::uint32_t (&c)[D]) {
  if constexpr (D == 2)
    return spread_bits_2(c[0]) | (spread_bits_2(c[1]) << 1);
  else
    return spread_bits_3(c[0]) | (spread_bits_3(c[1]) << 1) | (spread_bits_3(c[2]) << 2);
}

//! Integer coordinates of the box with Morton key `key`.
template <int D>
NF_HD NF_INLINE void morton_coords(std::uint64_t key, std::uint32_t (&c)[D]) {
  if constexpr (D == 2) {
    c[0] = compact_bits_2(key);
    c[1] = compact_bits_2(key >> 1);
  } else {
    c[0] = compact_bits_3(key);
    c[1] = compact_bits_3(key >> 1);
    c[2] = compact_bits_3(key >> 2);
  }
}

//! 32-bit Morton index of a box of the dense layout (levels up to max_dense_level).
template <int D>
NF_HD NF_INLINE std::uint32_t morton_encode(const std::uint32_t (&c)[D]) {
  return static_cast<std::uint32_t>(morton_key<D>(c));
}

//! Integer coordinates of the box with 32-bit Morton index `box`.
template <int D>
NF_HD NF_INLINE void morton_decode(std::uint32_t box, std::uint32_t (&c)[D]) {
  morton_coords<D>(box, c);
}

}  // namespace nf
