#pragma once
// The compact tree as the planners read it: box k's particles are [first[k], first[k + 1]) of the
// sorted bodies and its neighbors ids[offset[k] .. offset[k + 1]) (full or half lists).
#include <cstdint>

namespace nf::plan {

struct BoxLists {
  const std::uint32_t *first, *offset, *ids;
  __device__ std::uint32_t count(std::uint32_t b) const { return first[b + 1] - first[b]; }
  __device__ std::uint32_t neighbors(std::uint32_t b) const { return offset[b + 1] - offset[b]; }
  //! Particles of the box and of its listed neighbors: its near field's sources (full lists).
  __device__ std::uint32_t sources(std::uint32_t b) const {
    std::uint32_t s = count(b);
    for (std::uint32_t l = offset[b]; l < offset[b + 1]; ++l) s += count(ids[l]);
    return s;
  }
};

}  // namespace nf::plan
