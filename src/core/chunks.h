#pragma once
//! Static splits of index ranges among threads.

#include <cstddef>
#include <utility>

namespace nf {

//! Chunk t of `threads` over [0, n): [first, last). The same split in every pass, so passes that
//! count and then fill per chunk agree, and chunk order is index order.
inline std::pair<std::size_t, std::size_t> chunk_of(std::size_t n, int t, int threads) {
  return {n * std::size_t(t) / std::size_t(threads), n * std::size_t(t + 1) / std::size_t(threads)};
}

}  // namespace nf
