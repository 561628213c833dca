#pragma once
//! `--level auto`: the level whose near field costs least by an operation-count estimate.
//!
//! cost(K) = pairs(K) + c * M(K), where
//! - pairs(K) = sum over non-empty boxes b of n_b * (n_b + sum of n over b's neighbor boxes): the
//!   (directed) pairs a box-wise near-field kernel evaluates at level K;
//! - M(K) = the number of non-empty boxes, and c = 3^d * P_t^2 the overhead of one box (staging,
//!   launch, list traversal) in interaction-equivalents, with P_t = AutoLevelPolicy::target_occupancy.
//! On uniform input with P particles per box the cost is about 3^d N (P + P_t^2 / P), smallest at
//! P = P_t; clustered input has crowded boxes and so chooses deeper levels than uniform input of
//! the same N. Ties go to the shallower level.
//!
//! Levels are evaluated from 0 down; pairs(K) >= N and M(K) grows with K, so the search stops at
//! the first level where c * M(K) + N reaches the best cost so far (no deeper level can win), or
//! at `deepest`. Each level costs one pass over the particles' keys (sorted once at `deepest` and
//! coarsened) plus a neighbor lookup per non-empty box.

#include <cstdint>
#include <string>
#include <vector>

#include "tree/domain.h"
#include "core/particles.h"

namespace nf {

//! The knob of the rule.
struct AutoLevelPolicy {
  //! P_t: on uniform input the rule picks about this many particles per box. 16 is where the
  //! paper's bpb was fastest in the depth sweep on the H100 (2D uniform, N = 2^20: level 8,
  //! 0.346 ms, against 0.422 ms at P = 64 and 0.444 ms at P = 4; results/depth).
  static constexpr double target_occupancy = 16.0;
};

//! c of the rule for this dimension: 3^dim * P_t^2.
double auto_box_overhead(int dim);

//! A kernel's own cost at a level (its family's measured rates; methods/level_costs.h): seconds
//! per near-field pair, per box and per link (a box with itself or with a neighbor), counting the
//! non-empty boxes and the links among them, or every box and link for kernels that run over the
//! dense layout; plus the generic rule's c per non-empty box, priced at the kernel's pair time (a
//! tree method's cost of a box beyond its near field: without it the near field alone is cheapest
//! at one particle per box). With a model the rule minimizes this instead of pairs + c M; the early
//! stop is the same argument (pairs >= N; boxes and links only grow with the level).
struct KernelCostModel {
  std::string kernel;  //!< whose rates these are (the note names it)
  double pair_s = 0, box_s = 0, link_s = 0;
  bool all_boxes = false;
  //! The cost, seconds, at a level with these pairs, non-empty boxes and links among them.
  double cost(int dim, int level, double pairs, double boxes, double links) const;
};

//! The rule's figures at one level.
struct LevelCost {
  int level = 0;
  std::uint64_t boxes = 0;  //!< M(K), non-empty boxes
  std::uint64_t pairs = 0;  //!< pairs(K) (exact: at most N^2)
  std::uint64_t links = 0;  //!< links among the non-empty boxes, each box with itself included
  double cost = 0;          //!< pairs(K) + c M(K)
};

//! What the rule chose, and the levels it evaluated (ascending).
struct LevelChoice {
  int level = 0;
  int deepest = 0;  //!< the deepest level it was allowed to consider
  int dim = 2;
  std::uint64_t particles = 0;
  double overhead = 0;  //!< c
  const KernelCostModel* model = nullptr;  //!< the kernel's own cost (then `cost` is seconds)
  std::vector<LevelCost> evaluated;
  //! The evaluated entry of the chosen level.
  const LevelCost& chosen() const;
};

//! The non-empty boxes of one level as the level rules see them (this one, and the full methods'
//! balance of near and far field): keys ascending, particle counts.
struct LevelBoxes {
  int dim = 2, level = 0;
  std::vector<std::uint64_t> key;
  std::vector<std::uint32_t> count;
};

//! An input's boxes at any level 0..deepest: the particles' keys sorted once at `deepest`, each
//! level one pass over them (coarsened). Refuses a dimension other than 2 or 3 and a level
//! outside 0..max_level.
class LevelScan {
 public:
  LevelScan(const Particles& p, const Domain& domain, int deepest);
  int dim() const { return dim_; }
  int deepest() const { return deepest_; }
  std::uint64_t particles() const { return keys_.size(); }
  //! The boxes at `level` (0..deepest) into `out`, whose storage is reused.
  void boxes(int level, LevelBoxes& out) const;

 private:
  int dim_ = 2, deepest_ = 0;
  std::vector<std::uint64_t> keys_;  // at `deepest`, ascending
};

//! pairs(K) of the rule for a level's boxes: sum over b of n_b (n_b + particles in b's neighbors);
//! `links`, when given, gets the links among them (each box with itself and its non-empty
//! neighbors).
std::uint64_t box_pairs(const LevelBoxes& b, std::uint64_t* links = nullptr);

//! Applies the rule to `p` over `domain`, considering levels 0..deepest (deepest <= max_level);
//! with a model (which must outlive the choice), that kernel's cost.
LevelChoice choose_level(const Particles& p, const Domain& domain, int deepest, const KernelCostModel* model = nullptr);
//! The same over a scan made at a level >= deepest (several kernels choose from one scan).
LevelChoice choose_level(const LevelScan& scan, int deepest, const KernelCostModel* model = nullptr);

//! The rule's figures at exactly one level (the same computation choose_level runs).
LevelCost level_cost(const Particles& p, const Domain& domain, int level);

//! One line for users: the level chosen, and why.
std::string describe(const LevelChoice& c);

}  // namespace nf
