#pragma once
//! The sibling-group M2L kernel's plans (farfield/m2l_gpu.h, docs/design.md §16): which warp sums
//! which columns of which row quads of the operator table, for the whole table or one slice of its
//! row quads. Host code, used by m2l_gpu.cu.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "farfield/multi_index.h"
#include "farfield/offset_order.h"

namespace nf::farfield::m2l_plan {

constexpr int kMaxWarps = 16;  // __launch_bounds__(512): up to 128 registers a thread

// The candidate source offsets of a sibling group: c - 3 .. c + 2 per axis, 6^d of them (the
// kernel's kCandidates, m2l_group_kernel.cuh).
constexpr int candidates(int dim) { return dim == 3 ? 216 : 36; }

// The group kernel's dynamic shared memory for `tl` targets a lane, pipeline shape `stages` (1, one
// offset's moments and table at a time; 2, the next offset's moments and table copied while this
// one is summed; 3, where 2 do not fit, the next offset's moments copied during the sums and its
// table after them, into the one table buffer), `terms` moments and `table_size` table entries a
// stage, of `scalar` bytes each: the operands, the slots' target ids, a source id per (candidate,
// slot), and the active candidates and their orders. `words`: a source's moments as the kernel
// copies them (packed: packed_words; 0: terms, as they are); the operands' room holds at least the
// slots' `terms` locals, which the kernel sums there at its end.
inline std::size_t group_shared_bytes(int dim, int scalar, int tl, int stages, int terms, int table_size,
                                      int words = 0) {
  const int TB = 32 * tl, S = TB + 2;
  const std::size_t moments = (std::size_t(words > 0 ? words : terms) * S + 3) & ~std::size_t(3);
  const std::size_t operands = std::max(stages == 3 ? 2 * moments + std::size_t(table_size)
                                                    : std::size_t(stages) * (moments + std::size_t(table_size)),
                                        (std::size_t(terms) * S + 3) & ~std::size_t(3));
  return operands * std::size_t(scalar) + (TB + std::size_t(candidates(dim)) * TB) * 4 + 2 * std::size_t(candidates(dim)) * 4;
}



// A unit: row quad q (rows 4q .. 4q + 3; with two quads a unit, Quads(p, 8, 1, 8), rows 8q .. 8q + 7)
// over the chunks of columns (the kernel's chunk: 4 columns in the sibling-group kernel, 1 k-step
// on the tensor cores) that start at n0, n0 + stride chunk, ... below n1 (stride 1: the columns n0
// .. n1 - 1), packed q - first | n0 << 8 | n1 << 20 (first: the plan's first quad; at most kMaxWarps
// x U quads a plan, n < 4096 up to kMaxOrder), and the quad's first entry in the plan's part of the
// operator table (below 2^20 up to kMaxOrder), the stride less one and the degree of its first row,
// start | (stride - 1) << 20 | degree << 26.
inline int pack_unit(int q, int n0, int n1) { return q | n0 << 8 | n1 << 20; }
inline int pack_first(int start, int stride, int degree) { return start | (stride - 1) << 20 | degree << 26; }
constexpr int kMaxStride = 64;  // chunks, in the 6 bits pack_first keeps
// The sibling-group kernel's chunk of columns (m2l_group_kernel.cuh, kChunk).
constexpr int kGroupChunk = 4;

// Moments of 16 bits (docs/design.md §16 "Moments of 16 bits"): the group kernel's copies of a float
// source's moments keep the terms of degree below max(6, p - 4) in 3D (max(6, p - 3) in 2D) as
// floats and the rest as bfloat16 pairs (the rounding of a term of degree p - 4, at most 2^-8 of it,
// is then at most about a quarter of the truncation error's scale, rho^(p + 1) with rho the nearest
// far boxes' ratio: 0.43 in 3D, 0.35 in 2D; measured, 0.5-0.8% of the error in 3D: results/
// fmm-m2l-bf16; degree 6 is the lowest the CPU trial measured). The first packed term, rounded up to the
// kernel's chunk; `terms<dim>(p)` where none is.
inline int packed_from(int dim, int p) {
  const int first = std::max(6, p - (dim == 3 ? 4 : 3)), all = dim == 3 ? terms<3>(p) : terms<2>(p);
  const int below = dim == 3 ? terms<3>(first - 1) : terms<2>(first - 1);
  return std::min(all, (below + kGroupChunk - 1) / kGroupChunk * kGroupChunk);
}
// The 4-byte words of a source's moments with the terms from F packed in pairs (F floats first).
constexpr int packed_words(int terms, int F) { return terms <= F ? terms : F + (terms - F + 1) / 2; }
// Whether the group kernel packs its moments by default: 3D float from p = 11, where it was measured
// faster (H200, M2L ms unpacked / packed, scripts/builds-compare.sh, results/fmm-m2l-bf16, 3a3b4c3
// against 56cdfe5: 3D uniform 2^24 level 6 p = 11 41.2 / 39.3, level 5 p = 12 9.14 / 8.84;
// fmm-adaptive on Plummer 2^24 p = 12 36.7 / 34.9), not at 3D p = 10 (forced: 28.9 / 28.9;
// fmm-adaptive 21.8 / 21.7) nor in 2D (uniform 2^22 level 7 p = 14 0.354 / 0.357, p = 16 0.389 / 0.416).
constexpr bool packs_moments(int dim, int scalar, int p) { return dim == 3 && scalar == 4 && p >= 11; }

// The row quads at order p: their column counts, table offsets and first rows' degrees; a plan
// covers the quads first .. last - 1 (all of them, or one slice), its table offsets counted from
// quad first's. The tensor-core kernel (m2l_tensor_kernel.cuh) plans the same way over row *tiles*
// of 16 rows whose columns are counted in k-steps of 8 (Quads(p, 16, 8, 1): its "table offset" is
// then the tile's first k-step in its index map).
template <int D>
struct Quads {
  std::vector<int> columns, start, degree;
  int table_size = 0, first = 0, last = 0;
  int width = 1;  // columns counted in groups of `width`
  explicit Quads(int p, int rows = 4, int width_ = 1, int per_column = 4) : width(width_) {
    const int count = (terms<D>(p) + rows - 1) / rows;
    for (int q = 0; q < count; ++q) {
      degree.push_back(multi_index<D>(rows * q).degree());
      columns.push_back((terms<D>(p - degree.back()) + width - 1) / width);
      start.push_back(table_size);
      table_size += per_column * columns.back();
    }
    last = count;
  }
  // The quads q0 .. q1 - 1 (a slice).
  Quads range(int q0, int q1) const {
    Quads r = *this;
    r.first = q0, r.last = q1;
    return r;
  }
  int end(int q) const { return q + 1 < int(start.size()) ? start[std::size_t(q) + 1] : table_size; }
  // Where quad q's entries start within the covered quads' part of the table.
  int offset(int q) const { return start[std::size_t(q)] - start[std::size_t(first)]; }
  // Columns of quad q that an offset of order o sums (those n with |n| <= o - degree).
  int columns_at(int q, int o) const {
    const int left = o - degree[std::size_t(q)];
    return left < 0 ? 0 : std::min(columns[std::size_t(q)], (terms<D>(left) + width - 1) / width);
  }
};

// The sibling-group kernel's operator-table layout at order p over `quads` (row tiles of `rows` =
// 4 or 8 rows, Quads(p, rows, 1, rows)): tile q's column n holds its rows' entries side by side from
// start[q] + rows n. map[e] = +-(index(n + k) + 1), the sign (-1)^|n| (an offset's entry is that
// signed derivative D_{n+k}), 0 where the entry is padding (k past the terms, or |n| + |k| > p);
// degree[e] = |n| + |k| (an offset of lower order zeroes the entries above it); chunk_order[e / 4] =
// the tile's first row degree plus |n|, the lowest order that reads the column (the kernel copies a
// 16-byte chunk only for offsets of at least that order).
struct OperatorMap {
  std::vector<int> map;
  std::vector<unsigned char> degree, chunk_order;
};
template <int D>
OperatorMap operator_map(int p, const Quads<D>& quads, int rows) {
  const int t = terms<D>(p);
  OperatorMap m{std::vector<int>(std::size_t(quads.table_size), 0),
                std::vector<unsigned char>(std::size_t(quads.table_size), 0),
                std::vector<unsigned char>(std::size_t(quads.table_size) / 4, 0)};
  for (int q = 0; q < int(quads.columns.size()); ++q)
    for (int n = 0; n < quads.columns[std::size_t(q)]; ++n) {
      const MultiIndex mn = multi_index<D>(n);
      const std::size_t at = std::size_t(quads.start[std::size_t(q)]) + std::size_t(rows) * std::size_t(n);
      for (int h = 0; h < rows / 4; ++h)
        m.chunk_order[at / 4 + std::size_t(h)] = static_cast<unsigned char>(quads.degree[std::size_t(q)] + mn.degree());
      for (int j = 0; j < rows; ++j) {
        const int k = rows * q + j;
        if (k >= t) continue;
        const MultiIndex mk = multi_index<D>(k);
        if (mn.degree() + mk.degree() > p) continue;
        const int index1 = index<D>(mn + mk) + 1;
        m.map[at + std::size_t(j)] = mn.degree() % 2 ? -index1 : index1;
        m.degree[at + std::size_t(j)] = static_cast<unsigned char>(mn.degree() + mk.degree());
      }
    }
  return m;
}

// The most slices a plan takes: past them the older kernel runs. Each slice gathers every moment
// again: H200, fmm on 3D uniform 2^22 at level 5, M2L ms slices / older kernel, float p = 17 (10
// slices) 86.1 / 168.4, p = 18 (29 slices) 190.4 / 183.6; double p = 13 (5 slices) 62.3 / 99.8.
constexpr int kMostSlices = 16;

// The slices of order p's row quads, (first quad, last quad + 1) each, where a block may take
// `optin` bytes of `scalar`-byte values: cut in order where the next quad would pass the room
// beside one target a lane's `terms` moments in one stage, or `units` x kMaxWarps quads. None where
// one quad alone passes the room or more than kMostSlices would be needed.
template <int D>
std::vector<std::pair<int, int>> slice_cuts(const Quads<D>& quads, std::size_t optin, int scalar, int terms, int units) {
  const long room = (long(optin) - long(group_shared_bytes(D, scalar, 1, 1, terms, 0))) / long(scalar);
  const int count = int(quads.columns.size());
  std::vector<std::pair<int, int>> cut;
  for (int q = 0; q < count && room > 0;) {
    int q1 = q;
    while (q1 < count && quads.end(q1) - quads.start[std::size_t(q)] <= room && q1 - q < kMaxWarps * units) ++q1;
    if (q1 == q) return {};  // one quad's entries alone pass the room
    cut.emplace_back(q, q1);
    q = q1;
  }
  if (int(cut.size()) > kMostSlices) return {};
  return cut;
}

// Whether the group kernel runs order p, whole or in slices, where a block may take `optin` bytes
// (else the older kernel runs, which keeps no operator tables): one stage of the whole table beside
// one target a lane's moments, or at most kMostSlices slices of it (units: kUnits<1> = 10).
inline bool group_kernel_fits(int dim, int scalar, int p, std::size_t optin) {
  auto fits = [&](auto quads, int t) {
    return group_shared_bytes(dim, scalar, 1, 1, t, quads.table_size) <= optin ||
           !slice_cuts(quads, optin, scalar, t, 10).empty();
  };
  return dim == 2 ? fits(Quads<2>(p), terms<2>(p)) : fits(Quads<3>(p), terms<3>(p));
}

// The offsets' orders as a weighted list (order, how many of a full level's list offsets take it:
// farfield::offset_order_weights), the orders no offset takes left out.
template <int D>
std::vector<std::pair<int, double>> order_classes(const OffsetOrders& orders) {
  const OffsetOrderWeights weight = offset_order_weights(D, orders);
  std::vector<std::pair<int, double>> classes;
  for (int o = 0; o <= kMaxOrder; ++o)
    if (weight[std::size_t(o)] > 0) classes.emplace_back(o, weight[std::size_t(o)]);
  return classes;
}

// The quads cut into pieces of about `piece` columns, largest first by their weighted columns (sum
// over orders of weight x the piece's columns at that order). A quad's columns are dealt out in
// chunks of `chunk` columns (the sibling-group kernel's 4, its unrolled loop's; the tensor-core
// kernel's 1 k-step; 0: pieces of contiguous columns, as double takes them): a quad cut into k pieces
// gives piece i the chunks i, i + k, i + 2k, ... (n0 = chunk i, n1 = the quad's columns, stride k
// chunks). An offset of a lower order sums only a
// quad's first columns, and pieces of contiguous columns had left those to one warp while the
// others waited at the barrier (3D p = 12, 8-row tiles, one target a lane: the slowest warp's
// columns an offset, weighted over the offsets' orders, 1.86x the mean with contiguous pieces,
// 1.10x dealt out by column; docs/design.md §16, "Pieces dealt out").
struct PlanPiece {
  int q, n0, n1, stride = 1;  // stride: in chunks
  std::vector<double> cols;  // per class
  double weighted = 0;
};
// The columns of the chunks of `chunk` columns starting at n0, n0 + stride chunk, ... below min(n1, m)
// (chunk 0: the columns n0 .. min(n1, m) - 1).
inline int dealt_columns(int n0, int n1, int stride, int chunk, int m) {
  const int end = std::min(n1, m);
  if (chunk <= 0) return std::max(0, end - n0);  // contiguous pieces
  int count = 0;
  for (int c = n0; c < end; c += stride * chunk) count += std::min(chunk, end - c);
  return count;
}
// How many pieces a quad of c columns is cut into (chunk 0: contiguous pieces, as many as `piece` asks).
inline int pieces_of(int c, int piece, int chunk) {
  const int k = std::max(1, (c + piece - 1) / piece);
  return chunk > 0 ? std::min({kMaxStride, k, std::max(1, (c + chunk - 1) / chunk)}) : k;
}
template <int D>
std::vector<PlanPiece> plan_pieces(const Quads<D>& quads, const std::vector<std::pair<int, double>>& classes, int piece,
                                   int chunk) {
  const std::size_t K = classes.size();
  std::vector<PlanPiece> pieces;
  for (int q = quads.first; q < quads.last; ++q) {
    const int c = quads.columns[std::size_t(q)], k = pieces_of(c, piece, chunk);
    for (int i = 0; i < k; ++i) {
      // chunk 0: pieces of contiguous columns
      PlanPiece pc = chunk > 0 ? PlanPiece{q, chunk * i, c, k, std::vector<double>(K), 0}
                               : PlanPiece{q, c * i / k, c * (i + 1) / k, 1, std::vector<double>(K), 0};
      for (std::size_t j = 0; j < K; ++j) {
        pc.cols[j] = dealt_columns(pc.n0, pc.n1, pc.stride, chunk, quads.columns_at(q, classes[j].first));
        pc.weighted += classes[j].second * pc.cols[j];
      }
      pieces.push_back(std::move(pc));
    }
  }
  std::stable_sort(pieces.begin(), pieces.end(), [](const PlanPiece& a, const PlanPiece& b) { return a.weighted > b.weighted; });
  return pieces;
}

// How many pieces plan_pieces cuts, without cutting them.
template <int D>
std::size_t plan_piece_count(const Quads<D>& quads, int piece, int chunk) {
  std::size_t count = 0;
  for (int q = quads.first; q < quads.last; ++q) count += std::size_t(pieces_of(quads.columns[std::size_t(q)], piece, chunk));
  return count;
}

// A plan of the pieces for `warps` warps of at most U units each: each piece given (largest first)
// to the warp where it adds least to the per-order loads' spread (sum over orders of weight x
// piece's columns x the warp's load at that order). Its cost: the sum over orders of weight x the
// largest warp load, the columns the block's slowest warp sums per offset. False where the pieces
// need more than warps x U units.
template <int D>
bool plan_units(const Quads<D>& quads, const std::vector<std::pair<int, double>>& classes, const std::vector<PlanPiece>& pieces,
                int warps, int U, std::vector<int>& plan, double& cost) {
  const std::size_t K = classes.size();
  if (pieces.size() > std::size_t(warps) * U) return false;
  std::vector<std::vector<double>> load(std::size_t(warps), std::vector<double>(K, 0.0));
  std::vector<int> units(std::size_t(warps), 0);
  plan.assign(std::size_t(2) * warps * U, 0);
  for (const PlanPiece& pc : pieces) {
    int best = -1;
    double best_add = 0;
    for (int w = 0; w < warps; ++w) {
      if (units[std::size_t(w)] == U) continue;
      double add = 0;
      for (std::size_t j = 0; j < K; ++j) add += classes[j].second * pc.cols[j] * load[std::size_t(w)][j];
      if (best < 0 || add < best_add) best = w, best_add = add;
    }
    const std::size_t slot = std::size_t(best) * U + std::size_t(units[std::size_t(best)]++);
    plan[2 * slot] = pack_unit(pc.q - quads.first, pc.n0, pc.n1);
    plan[2 * slot + 1] = pack_first(quads.offset(pc.q), pc.stride, quads.degree[std::size_t(pc.q)]);
    for (std::size_t j = 0; j < K; ++j) load[std::size_t(best)][j] += pc.cols[j];
  }
  cost = 0;
  for (std::size_t j = 0; j < K; ++j) {
    double most = 0;
    for (const auto& l : load) most = std::max(most, l[j]);
    cost += classes[j].second * most;
  }
  return true;
}

// The contiguous plan (the plan before the orders per offset): the quads' columns in order, every
// warp taking about the same number of them (a quad split between neighbouring warps where it
// crosses a share), the share raised until U units a warp suffice; warps from about 1.25 quads'
// worth of units a warp (at least 8) up to kMaxWarps. 0 warps where none fits.
template <int D>
int contiguous_plan(const Quads<D>& quads, int U, std::vector<int>& plan) {
  const std::vector<int>& columns = quads.columns;
  long total = 0;
  for (int q = quads.first; q < quads.last; ++q) total += columns[std::size_t(q)];
  for (int warps = std::max(8, (5 * (quads.last - quads.first) + 4 * U - 1) / (4 * U)); warps <= kMaxWarps; ++warps)
    for (long share = (total + warps - 1) / warps; share <= total; share += std::max(1L, share / 10)) {
      plan.assign(std::size_t(2) * warps * U, 0);
      int w = 0, u = 0;
      long load = 0;
      bool fits = true;
      for (std::size_t q = std::size_t(quads.first); q < std::size_t(quads.last) && fits; ++q) {
        for (int n = 0; n < columns[q];) {
          const long take = std::min<long>(columns[q] - n, share - load);
          if (take <= 0 || u == U) {
            if (++w == warps) {
              fits = false;
              break;
            }
            u = 0, load = 0;
            continue;
          }
          const std::size_t slot = std::size_t(w) * U + u;
          plan[2 * slot] = pack_unit(int(q) - quads.first, n, n + int(take));
          plan[2 * slot + 1] = pack_first(quads.offset(int(q)), 1, quads.degree[q]);
          ++u, load += take, n += int(take);
        }
      }
      if (fits) return warps;
    }
  return 0;
}

// The cheapest balanced plan over 8..kMaxWarps warps and a few piece sizes (fewer warps on ties), each
// quad's columns dealt out to its pieces in chunks of `chunk` (plan_pieces); 0 warps where none fits.
template <int D>
int best_plan(const Quads<D>& quads, const std::vector<std::pair<int, double>>& classes, int U, std::vector<int>& plan,
              int chunk) {
  int warps = 0;
  double best = 0;
  std::vector<int> trial;
  // Each piece size's pieces are cut once, and only where kMaxWarps warps' units can take them (at
  // 3D p = 12 most sizes cannot, and cutting them had been most of a first build's plan time).
  constexpr int kPieces[] = {8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 4096};
  std::vector<std::vector<PlanPiece>> cut(std::size(kPieces));
  std::vector<bool> fits(std::size(kPieces), false);
  for (std::size_t i = 0; i < std::size(kPieces); ++i)
    if ((fits[i] = plan_piece_count<D>(quads, kPieces[i], chunk) <= std::size_t(kMaxWarps) * U))
      cut[i] = plan_pieces<D>(quads, classes, kPieces[i], chunk);
  for (int w = 8; w <= kMaxWarps; ++w)
    for (std::size_t i = 0; i < std::size(kPieces); ++i) {
      double cost = 0;
      if (!fits[i] || !plan_units<D>(quads, classes, cut[i], w, U, trial, cost)) continue;
      if (warps == 0 || cost < best * (1 - 1e-9)) warps = w, best = cost, plan = trial;
    }
  return warps;
}

// The tensor-core kernel's index map at order p (m2l_tensor_kernel.cuh): for row tile r (rows 16 r
// .. 16 r + 15 of tiles = Quads(p, 16, 8, 1)), k-step s (columns 8 s .. 8 s + 7) and lane l (g = l /
// 4, t = l % 4), two words at 2 ((tiles.start[r] + s) 32 + l): A(16 r + g, 8 s + t) | A(16 r + g + 8,
// 8 s + t) << 16, then the same rows at column 8 s + t + 4, the lane's four entries of the m16n8k8
// A fragment. A(k, n) indexes the signed derivatives: index(n + k), plus terms where |n| is odd
// (the entry is -D_{n+k}), or 2 terms (a zero) where k or n passes the terms or |n| + |k| passes p.
template <int D>
std::vector<std::uint32_t> tensor_map(int p, const Quads<D>& tiles) {
  const int t = terms<D>(p);
  const std::uint32_t zero = std::uint32_t(2 * t);
  auto entry = [&](int k, int n) -> std::uint32_t {
    if (k >= t || n >= t) return zero;
    const MultiIndex mk = multi_index<D>(k), mn = multi_index<D>(n);
    if (mk.degree() + mn.degree() > p) return zero;
    return std::uint32_t(index<D>(mn + mk) + (mn.degree() % 2 ? t : 0));
  };
  std::vector<std::uint32_t> map(std::size_t(tiles.table_size) * 64);
  for (std::size_t r = 0; r < tiles.columns.size(); ++r)
    for (int s = 0; s < tiles.columns[r]; ++s)
      for (int lane = 0; lane < 32; ++lane) {
        const int k = 16 * int(r) + lane / 4, n = 8 * s + lane % 4;
        const std::size_t at = 2 * ((std::size_t(tiles.start[r]) + std::size_t(s)) * 32 + std::size_t(lane));
        map[at] = entry(k, n) | entry(k + 8, n) << 16;
        map[at + 1] = entry(k, n + 4) | entry(k + 8, n + 4) << 16;
      }
  return map;
}

// Whether float order p runs M2L on the tensor cores by default (m2l_tensor_gpu.h; where it fits):
// 3D p = 13..16, where it was measured faster than the sibling-group kernel (H200, 3D uniform 2^24
// at level 5, M2L tensor / group: p = 13 0.72, 14 0.68, 16 0.69; fmm-adaptive on Plummer 2^24 at p =
// 14, 0.67; p = 15, measured apart, 0.66). Not below: p = 12 1.09-1.14,
// p = 10 and 11 1.6-2.1; not in 2D, 1.17-1.36 at p = 13..20 (results/fmm-m2l-tensor/).
inline bool tensor_by_default(int dim, int p) { return dim == 3 && p >= 13 && p <= 16; }

// The tensor-core kernel's row tiles (16 rows) at most: kMaxWarps warps of kTensorUnits = 4 units
// (m2l_tensor_kernel.cuh), each tile at least one unit.
constexpr int kTensorMaxTiles = kMaxWarps * 4;

// The entries of an offset's signed derivative table on the tensor cores (m2l_tensor_kernel.cuh):
// the terms, their negatives and a zero, rounded up to 4.
inline int tensor_table_entries(int dim, int p) {
  return (2 * (dim == 2 ? terms<2>(p) : terms<3>(p)) + 1 + 3) & ~3;
}

// Its dynamic shared memory at order p with `stages` operand buffers: each the moments of 32 slots
// (rows of terms rounded up to 8) and the signed derivatives, then the slots' target ids, a source
// id per (candidate, slot) and the active candidates with their orders.
inline std::size_t tensor_shared_bytes(int dim, int p, int stages) {
  const int t = dim == 2 ? terms<2>(p) : terms<3>(p), rows = (t + 7) & ~7;
  return std::size_t(stages) * std::size_t(rows * 32 + tensor_table_entries(dim, p)) * 4 +
         std::size_t(32 + candidates(dim) * 32) * 4 + 2 * std::size_t(candidates(dim)) * 4;
}

// Whether it runs order p where a block may take `optin` bytes: one operand buffer fits and its row
// tiles do not outnumber the warps' units.
inline bool tensor_kernel_fits(int dim, int p, std::size_t optin) {
  const int t = dim == 2 ? terms<2>(p) : terms<3>(p);
  return tensor_shared_bytes(dim, p, 1) <= optin && (t + 15) / 16 <= kTensorMaxTiles;
}

// The entries of an offset's operator table at order p for values of `scalar` bytes (all of its row
// quads; in float, which may take two quads a unit, the larger of the two layouts), for the memory
// estimate (methods/memory_estimate.cc).
inline int group_table_entries(int dim, int p, int scalar) {
  const int quads = dim == 2 ? Quads<2>(p).table_size : Quads<3>(p).table_size;
  if (scalar != 4) return quads;
  return std::max(quads, dim == 2 ? Quads<2>(p, 8, 1, 8).table_size : Quads<3>(p, 8, 1, 8).table_size);
}

}  // namespace nf::farfield::m2l_plan
