#pragma once
//! The tables of M2M and L2L by parity on the GPU (docs/design.md §16, "M2M and L2L by parity"):
//! each output term's sum of products as a list of (input index, factor), and their layout by warp.
//! Host code (the GPU's Shifts uploads them; tests check them against expansion.h's shifts).
//!
//! A child sits s = sigma / 4 of its parent's side from the parent's centre (sigma_a = +-1), so a
//! shift by j carries sigma^j c_j with c_j = prod_a 4^-j_a / j_a!, and sigma^j depends only on the
//! parity class pi of j (bit a = j_a mod 2):
//!   M2M: Mp_n = sum_pi sum_{j <= n, j = pi mod 2} c_j S^pi_{n-j}, input S laid out [pi][terms];
//!   L2L: T^pi_k = sum_{j = pi mod 2, |k + j| <= p} c_j Lp_{k+j}, one list per (k, pi).

#include <vector>

namespace nf::farfield {

//! One product of a sum: input[index] * coef.
struct ShiftProduct {
  int index = 0;
  double coef = 0;
};

//! lists[n][g]: output term n's list g of products (every n has the same number of lists).
using ShiftLists = std::vector<std::vector<std::vector<ShiftProduct>>>;

//! M2M's lists at order p: one list a parent term n, over S's [pi][terms] layout.
template <int D>
ShiftLists m2m_lists(int p);

//! L2L's lists at order p: 2^D lists a child term k, list pi giving T^pi_k over the parent's locals.
template <int D>
ShiftLists l2l_lists(int p);

//! The products of every list dealt to the lanes of one block so that they finish together: lists
//! longer than a chunk (the average load a lane, at least 8) are cut into chunks, chunks go longest
//! first to the least loaded lane, and a lane runs its chunks one after the other, adding each
//! chunk's sum into output `out` (list g of term n: out = g * terms + n) when the next chunk
//! starts. Warp w's lanes hold rows[w] products each (the longest lane's load), lane l's product r
//! at first[w] + 32 r + l; a shorter lane is padded with zero factors into its last output.
struct ShiftLayout {
  struct Entry {
    int in = 0, out = 0;  //!< input index, output index (g * terms + n)
    double coef = 0;
  };
  int warps = 0;                //!< the block's warps (its threads: 32 x warps)
  int outputs = 0;              //!< lists in all (terms x lists a term), plus one spare slot
  std::vector<int> first, rows;  //!< per warp
  std::vector<Entry> entries;
};

//! Deals `lists` to the lanes of `warps` warps (0: the fewest up to 8 that leave 16 products a
//! lane or fewer, at least 2).
ShiftLayout balance(const ShiftLists& lists, int warps = 0);

}  // namespace nf::farfield
