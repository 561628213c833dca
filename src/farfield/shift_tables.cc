// The tables of M2M and L2L by parity (farfield/shift_tables.h).
#include "farfield/shift_tables.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "farfield/expansion.h"
#include "farfield/multi_index.h"

namespace nf::farfield {
namespace {

// c_j = prod_a 4^-j_a / j_a!: the monomial factors y^j / j! of expansion.h at y = (1/4, ..).
template <int D>
double shift_factor(const Powers<D, double>& quarter, const MultiIndex& j) {
  double c = 1;
  for (int a = 0; a < D; ++a) c *= quarter.axis[a][j[a]];
  return c;
}

template <int D>
Powers<D, double> quarter_powers(int p) {
  double y[D];
  for (int a = 0; a < D; ++a) y[a] = 0.25;
  return Powers<D, double>(y, p);
}

template <int D>
int parity(const MultiIndex& j) {
  int pi = 0;
  for (int a = 0; a < D; ++a) pi |= (j[a] & 1) << a;
  return pi;
}

}  // namespace

template <int D>
ShiftLists m2m_lists(int p) {
  const int n_terms = terms<D>(p);
  ShiftLists lists(std::size_t(n_terms), std::vector<std::vector<ShiftProduct>>(1));
  const Powers<D, double> quarter = quarter_powers<D>(p);
  for (int a = 0; a < n_terms; ++a) {
    const MultiIndex n = multi_index<D>(a);
    for (int b = 0; b < n_terms; ++b) {
      const MultiIndex j = multi_index<D>(b);
      if (n.contains(j)) lists[a][0].push_back({parity<D>(j) * n_terms + index<D>(n - j), shift_factor<D>(quarter, j)});
    }
  }
  return lists;
}

template <int D>
ShiftLists l2l_lists(int p) {
  const int n_terms = terms<D>(p);
  ShiftLists lists(std::size_t(n_terms), std::vector<std::vector<ShiftProduct>>(1u << D));
  const Powers<D, double> quarter = quarter_powers<D>(p);
  for (int a = 0; a < n_terms; ++a) {
    const MultiIndex k = multi_index<D>(a);
    for (int b = 0; b < n_terms; ++b) {
      const MultiIndex j = multi_index<D>(b);
      if (k.degree() + j.degree() <= p) lists[a][parity<D>(j)].push_back({index<D>(k + j), shift_factor<D>(quarter, j)});
    }
  }
  return lists;
}

ShiftLayout balance(const ShiftLists& lists, int warps) {
  const int n_terms = int(lists.size()), groups = n_terms ? int(lists[0].size()) : 0;
  std::size_t total = 0;
  for (const auto& t : lists)
    for (const auto& l : t) total += l.size();
  if (warps <= 0) warps = int(std::clamp<std::size_t>((total + 32 * 16 - 1) / (32 * 16), 2, 8));
  const int lanes = 32 * warps;
  const std::size_t chunk = std::max<std::size_t>(8, (total + lanes - 1) / lanes);
  struct Chunk {
    int out;
    const ShiftProduct* first;
    std::size_t size;
  };
  std::vector<Chunk> chunks;
  for (int n = 0; n < n_terms; ++n)
    for (int g = 0; g < groups; ++g) {
      const auto& l = lists[std::size_t(n)][std::size_t(g)];
      for (std::size_t i = 0; i < l.size(); i += chunk) chunks.push_back({g * n_terms + n, l.data() + i, std::min(chunk, l.size() - i)});
    }
  std::stable_sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) { return a.size > b.size; });
  // Longest chunk first to the least loaded lane (ties: the lowest lane).
  using Load = std::pair<std::size_t, int>;
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> least;
  for (int l = 0; l < lanes; ++l) least.push({0, l});
  std::vector<std::vector<ShiftLayout::Entry>> lane(static_cast<std::size_t>(lanes));
  for (const Chunk& c : chunks) {
    const Load top = least.top();
    least.pop();
    for (std::size_t i = 0; i < c.size; ++i) lane[std::size_t(top.second)].push_back({c.first[i].index, c.out, c.first[i].coef});
    least.push({top.first + c.size, top.second});
  }
  ShiftLayout out;
  out.warps = warps;
  out.outputs = groups * n_terms + 1;
  for (int w = 0; w < warps; ++w) {
    std::size_t rows = 0;
    for (int l = 0; l < 32; ++l) rows = std::max(rows, lane[std::size_t(32 * w + l)].size());
    out.first.push_back(int(out.entries.size())), out.rows.push_back(int(rows));
    out.entries.resize(out.entries.size() + 32 * rows);
    for (int l = 0; l < 32; ++l) {
      const auto& mine = lane[std::size_t(32 * w + l)];
      const int pad = mine.empty() ? out.outputs - 1 : mine.back().out;  // zero factors, no extra output
      for (std::size_t r = 0; r < rows; ++r)
        out.entries[std::size_t(out.first.back()) + 32 * r + std::size_t(l)] = r < mine.size() ? mine[r] : ShiftLayout::Entry{0, pad, 0.0};
    }
  }
  return out;
}

template ShiftLists m2m_lists<2>(int);
template ShiftLists m2m_lists<3>(int);
template ShiftLists l2l_lists<2>(int);
template ShiftLists l2l_lists<3>(int);

}  // namespace nf::farfield
