#pragma once
//! Z-order (Morton) box indices, x in the lowest bit: bit d*k + a of the index holds bit k of the
//! coordinate along axis a (paper Fig. 2: at level 2, box (01, 01) is 0011 = 3).

#include <cstdint>

#include "common/hd.h"

namespace nf {

//! Spreads the low 16 bits of v to the even bit positions.
NF_HD NF_INLINE std::uint32_t spread_bits_2(std::uint32_t v) {
  v &= 0x0000FFFFu;
  v = (v | (v << 8)) & 0x00FF00FFu;
  v = (v | (v << 4)) & 0x0F0F0F0Fu;
  v = (v | (v << 2)) & 0x33333333u;
  v = (v | (v << 1)) & 0x55555555u;
  return v;
}

//! Inverse of spread_bits_2.
NF_HD NF_INLINE std::uint32_t compact_bits_2(std::uint32_t v) {
  v &= 0x55555555u;
  v = (v | (v >> 1)) & 0x33333333u;
  v = (v | (v >> 2)) & 0x0F0F0F0Fu;
  v = (v | (v >> 4)) & 0x00FF00FFu;
  v = (v | (v >> 8)) & 0x0000FFFFu;
  return v;
}

//! Spreads the low 10 bits of v to every third bit position.
NF_HD NF_INLINE std::uint32_t spread_bits_3(std::uint32_t v) {
  v &= 0x000003FFu;
  v = (v | (v << 16)) & 0x030000FFu;
  v = (v | (v << 8)) & 0x0300F00Fu;
  v = (v | (v << 4)) & 0x030C30C3u;
  v = (v | (v << 2)) & 0x09249249u;
  return v;
}

//! Inverse of spread_bits_3.
NF_HD NF_INLINE std::uint32_t compact_bits_3(std::uint32_t v) {
  v &= 0x09249249u;
  v = (v | (v >> 2)) & 0x030C30C3u;
  v = (v | (v >> 4)) & 0x0300F00Fu;
  v = (v | (v >> 8)) & 0x030000FFu;
  v = (v | (v >> 16)) & 0x000003FFu;
  return v;
}

//! Morton index of the box with integer coordinates c[0..D).
template <int D>
NF_HD NF_INLINE std::uint32_t morton_encode(const std::uint32_t (&c)[D]) {
  if constexpr (D == 2)
    return spread_bits_2(c[0]) | (spread_bits_2(c[1]) << 1);
  else
    return spread_bits_3(c[0]) | (spread_bits_3(c[1]) << 1) | (spread_bits_3(c[2]) << 2);
}

//! Integer coordinates of the box with Morton index `box`.
template <int D>
NF_HD NF_INLINE void morton_decode(std::uint32_t box, std::uint32_t (&c)[D]) {
  if constexpr (D == 2) {
    c[0] = compact_bits_2(box);
    c[1] = compact_bits_2(box >> 1);
  } else {
    c[0] = compact_bits_3(box);
    c[1] = compact_bits_3(box >> 1);
    c[2] = compact_bits_3(box >> 2);
  }
}

}  // namespace nf
