#pragma once
//! Which boxes of its tree a near-field evaluation computes. One device computes every box; an
//! evaluation spread over several devices (distributed/) gives each device a part: a tree of the
//! part's own boxes and the halo boxes it reads, of which only the own ones are computed, with the
//! launch choices of the whole input so that the part computes exactly what one device would.

#include <cstdint>

namespace nf {

//! The defaults: every box of the tree, the tree's own launch choices.
struct BoxScope {
  static constexpr std::uint32_t kAll = ~0u;
  //! Only the first `computed_boxes` boxes of the tree (key order) are computed; the rest are
  //! read as sources only.
  std::uint32_t computed_boxes = kAll;
  //! False: the computed boxes' neighbors with smaller keys are not in the tree (a part that
  //! computes half-list pairs only and sends the counterforces back); kernels then compute every
  //! pair through the half lists.
  bool lower_neighbors = true;
  //! > 0: take the guarded or unguarded interaction as an input with this largest mass would.
  double max_mass = 0;
  //! > 0: shape launches as for an input whose largest box holds this many particles.
  std::uint32_t max_box_count = 0;
  //! True: the part only builds the tree and gathers the bodies, for a full method that plans and
  //! sums the near field itself (fmm-adaptive): no neighbor lists are built and no plan is made,
  //! and evaluating the part is an error.
  bool tree_only = false;
};

}  // namespace nf
