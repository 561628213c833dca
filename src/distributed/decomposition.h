#pragma once
//! The near field on several GPUs (docs/design.md §15): how the boxes are shared out, which
//! boxes each part needs from the others (its halo), and the send/recv plan that moves them.
//! Plain C++ and independent of the transport: NCCL in one process (multi_gpu.h), one process
//! per GPU under MPI, or host memory in the tests.
//!
//! The non-empty boxes of the compact tree, in Z-order, are cut into G contiguous ranges of about
//! equal cost (the operation model's pair count per box). Part p owns the particles of its range
//! and holds, besides them, the particles of its halo: the boxes outside the range that are
//! adjacent to one of its boxes. Every part lays its particles out as one tree would: boxes in
//! ascending key, each box's particles in input order, so a box of a part holds exactly what the
//! one-GPU tree's box holds, in the same order.
//!
//! Pairs between two parts (cross pairs) are computed in one of two ways:
//! - twice: each part computes its own particles' forces from own + halo and ignores what its
//!   kernel writes for the halo. Every cross pair is evaluated on both sides; any kernel works,
//!   and a deterministic kernel gives the one-GPU result bit for bit.
//! - once (Newton-3 kernels): part p computes only the half-list pairs of its own boxes (pairs
//!   (b, c) with c above b), so it needs only the halo above its range; the counterforces its
//!   kernel accumulates on those halo particles are sent back to their owners and added there.
//!   Each cross pair is evaluated once; the sums run in another order than on one GPU.

#include <cstdint>
#include <string>
#include <vector>

#include "tree/domain.h"
#include "core/particles.h"
#include "distributed/cross_pairs.h"
#include "tree/box_set.h"
#include "tree/tree.h"

namespace nf {

//! Cost of each box, from the operation model of a near-field evaluation: n_b (n_b + particles of
//! its neighbors), the pairs its particles take part in plus one load and store per particle.
std::vector<double> box_costs(const BoxSet& b);

//! Cuts `cost` (per box, in Z-order) into `parts` contiguous ranges: parts + 1 non-decreasing
//! boundaries from 0 to cost.size(). Boundary g sits where the running cost is nearest to
//! g / parts of the total, so no part costs more than total / parts + the largest box's cost.
//! Parts may be empty (more parts than boxes, or one box heavier than a part's share).
std::vector<std::uint32_t> split_by_cost(const std::vector<double>& cost, int parts);


//! One part's share of the boxes.
struct Part {
  std::uint32_t first = 0, last = 0;   //!< own boxes: compact ids [first, last)
  std::vector<std::uint32_t> halo;     //!< boxes outside the range adjacent to an own box, ascending
  std::uint32_t upper_halo_begin = 0;  //!< halo[upper_halo_begin..] lie above the range (all `once` needs)
  double cost = 0;                     //!< sum of box_costs over the own boxes
  std::uint64_t own_particles = 0;
};

//! The boxes cut into parts.
struct Decomposition {
  std::vector<std::uint32_t> bounds;  //!< parts + 1 boundaries (split_by_cost)
  std::vector<Part> parts;
  double total_cost = 0, max_box_cost = 0;
  int size() const { return static_cast<int>(parts.size()); }
  //! The part owning compact box b.
  int owner(std::uint32_t b) const;
};

//! Splits `b` into `parts` parts (>= 1) by cost, with each part's halo.
Decomposition decompose(const BoxSet& b, int parts);

//! One part's particles on its device: the boxes it holds, in ascending key order, and where each
//! box's particles sit in its sorted arrays (what its tree's box_first will be).
struct PartLayout {
  std::vector<std::uint32_t> boxes;  //!< compact ids of the whole input, ascending: halo below, own, halo above
  std::vector<std::uint64_t> first;  //!< boxes + 1 offsets into the part's sorted particles
  std::uint32_t own_begin = 0, own_end = 0;  //!< boxes[own_begin..own_end) are the own range
  std::uint64_t particles() const { return first.empty() ? 0 : first.back(); }
  //! The own particles: sorted positions [own_first(), own_last()).
  std::uint64_t own_first() const { return first[own_begin]; }
  std::uint64_t own_last() const { return first[own_end]; }
};

//! What one part exchanges with one peer in an evaluation. Bodies go from the part to the peer
//! (`send`, gathered from these sorted positions, boxes ascending) and from the peer into the
//! part ([recv_begin, recv_begin + recv_count) of the part's sorted arrays, one contiguous range
//! because a peer's boxes are consecutive in Z-order). With CrossPairs::once the counterforces
//! travel back the same way reversed: the part sends its accelerations of the received range and
//! adds what comes back onto the `send` positions.
struct PeerTransfer {
  int peer = 0;
  std::vector<std::uint32_t> send;  //!< sorted positions of this part's particles the peer holds
  std::uint64_t recv_begin = 0, recv_count = 0;
};

//! One part's layout and its transfers (only peers with something to move, ascending).
struct PartPlan {
  PartLayout layout;
  std::vector<PeerTransfer> peers;
};

//! The layouts and transfers of all parts for one way of computing cross pairs.
struct ExchangePlan {
  CrossPairs cross = CrossPairs::twice;
  std::vector<PartPlan> parts;
  //! Bodies moved per evaluation, all parts together (counterforces move as many accelerations).
  std::uint64_t moved_bodies() const;
};

//! The plan of `d` over `b`: with `twice` every part holds its whole halo; with `once` only the
//! halo above its range, and own boxes come first in its layout (`automatic` is refused: resolve
//! it for the kernel first).
ExchangePlan exchange_plan(const BoxSet& b, const Decomposition& d, CrossPairs cross);

//! Each part's input: the rows (indices into the whole input, ascending) of the particles of its
//! layout's boxes, from every particle's compact box id (count_boxes). Parts take these rows in
//! this order, so their trees keep input order within a box.
std::vector<std::vector<std::uint32_t>> part_rows(const std::vector<std::uint32_t>& particle_box,
                                                  const ExchangePlan& plan, std::uint32_t boxes);

//! Particles of `p` at `rows`, in that order (positions and masses; ids and velocities dropped).
Particles select_rows(const Particles& p, const std::vector<std::uint32_t>& rows);

//! A one-line summary for logs: parts, boxes, particles and halo per part, cost imbalance.
std::string describe(const Decomposition& d, const ExchangePlan& plan);

}  // namespace nf
