#include "allpairs/near_mask.h"

#include "tree/box_rule.h"

namespace nf {

std::vector<Cell> cells_from_positions(const Particles& p, int level, const Domain& d) {
  std::vector<Cell> cells(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    Cell& c = cells[i];
    c.x = box_coordinate(p.x[i], d.origin[0], d.side, level);
    c.y = box_coordinate(p.y[i], d.origin[1], d.side, level);
    c.z = p.dim == 3 ? box_coordinate(p.z[i], d.origin[2], d.side, level) : 0u;
    c.pad = 0;
  }
  return cells;
}

}  // namespace nf
