#include "tree/adaptive.h"

namespace nf {

std::vector<std::vector<std::uint8_t>> adaptive_flags(const TreeLevels& t, std::uint32_t leaf_size) {
  using namespace adaptive;
  std::vector<std::vector<std::uint8_t>> flags(t.level.size());
  for (std::size_t l = 0; l < t.level.size(); ++l) {
    const TreeLevel& level = t.level[l];
    std::vector<std::uint8_t>& f = flags[l];
    f.assign(level.boxes(), 0);
    const bool deepest = l + 1 == t.level.size();
    for (std::uint32_t b = 0; b < level.boxes(); ++b) {
      const std::uint8_t parent = l == 0 ? std::uint8_t(kSplit | kExpanded) : flags[l - 1][level.parent[b]];
      if (parent & kExpanded) f[b] |= kKept;
      if (parent & kSplit) f[b] |= kTarget;
      if ((f[b] & kTarget) && !deepest && level.count(b) > leaf_size) f[b] |= kSplit;
    }
    for (std::uint32_t b = 0; b < level.boxes(); ++b) {
      if (!(f[b] & kKept)) continue;
      bool expand = (f[b] & kSplit) != 0;
      for (std::uint32_t k = level.near.offset[b]; k < level.near.offset[b + 1] && !expand; ++k)
        expand = (f[level.near.ids[k]] & kSplit) != 0;
      if (expand && !deepest) f[b] |= kExpanded;
    }
  }
  return flags;
}

}  // namespace nf
