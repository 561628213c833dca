#pragma once
// Inputs for the box counts (tree/box_set.h) and the decomposition over several devices built on
// them (distributed/): empty, one particle, odd counts, uniform, clustered (empty boxes between
// dense ones), deep levels, 2D and 3D.
#include <string>
#include <vector>

#include "helpers.h"

namespace nf::test {

//! One input and the level to count or split its boxes at.
struct BoxInput {
  std::string name;
  Particles p;
  int level;
};

//! Every input of the list above.
inline std::vector<BoxInput> box_inputs() {
  std::vector<BoxInput> c;
  c.push_back({"empty 2D", make("uniform", 2, 0), 3});
  c.push_back({"one particle 3D", make("uniform", 3, 1), 2});
  c.push_back({"uniform 2D odd", make("uniform", 2, 3001, 11), 4});
  c.push_back({"clusters 2D", make("clusters", 2, 4000, 12), 6});
  c.push_back({"uniform 3D", make("uniform", 3, 2500, 13), 3});
  c.push_back({"plummer 3D deep", make("plummer", 3, 3000, 14), 7});
  c.push_back({"corners 2D deep", make("corners", 2, 1000, 15), 12});
  return c;
}

}  // namespace nf::test
