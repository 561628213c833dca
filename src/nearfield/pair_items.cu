#include "nearfield/pair_items.cuh"

#include "nearfield/plan/work_list.cuh"

namespace nf {
namespace {

// A neighbor group's bound in target chunks, where merging saves a padded batch (BoxGraph::group).
constexpr std::uint32_t kSourceGroup = 4;

//! A run of particles [first, end) to cut into chunks: one box, or a group of neighbor boxes.
struct Run {
  std::uint32_t first, end;
  bool small;
  __device__ std::uint32_t size() const { return end - first; }
};

struct BoxGraph {
  const std::uint32_t *box_first, *half_offset, *half_ids;  // box k is [box_first[k], box_first[k+1])
  std::uint32_t chunk;                                      // 32 times a power of two
  std::uint32_t source_chunk;                               // a multiple of chunk: a source range's bound
  const std::uint8_t* small;  // null: every box big
  __device__ bool is_small(std::uint32_t box) const { return small && small[box]; }
  __device__ Run box_run(std::uint32_t b) const { return {box_first[b], box_first[b + 1], is_small(b)}; }

  // A run of n particles is cut into full chunks of `chunk` and its rest r: one chunk when r fills
  // a power of two of lane groups (8 2^k targets, the lanes of class k), else two, the largest
  // such 8 2^k below r and what is left. A rest of 300 becomes 256 + 44 (lanes for 256 + 64
  // targets, 94% busy) instead of one chunk in the 512-target class (59%): on 2D clusters at level
  // 10 the lanes' use went from 72% to 88% (counted from the tree). A rest of 20 becomes 16 + 4 (a
  // half and a quarter warp).
  __device__ static std::uint32_t head(std::uint32_t r) {
    const std::uint32_t unit = r > 32 ? 32 : 8, groups = (r + unit - 1) / unit, p = 1u << (31 - __clz(groups));
    return p == groups ? r : unit * p;
  }
  __device__ std::uint32_t chunks(const Run& run) const {
    const std::uint32_t n = run.size(), r = n % chunk;
    return n / chunk + (r == 0 ? 0 : head(r) == r ? 1 : 2);
  }
  // Chunk ci of a run: [first, end) of the sorted particles.
  __device__ void chunk_range(const Run& run, std::uint32_t ci, std::uint32_t& first, std::uint32_t& end) const {
    const std::uint32_t n = run.size(), full = n / chunk;
    if (ci < full) {
      first = run.first + ci * chunk;
      end = first + chunk;
      return;
    }
    const std::uint32_t rest = run.first + full * chunk, h = head(n - full * chunk);
    first = ci == full ? rest : rest + h;
    end = ci == full ? rest + h : run.end;
  }

  // The half list of a box in groups: a group is a run of neighbors with consecutive compact ids
  // (their particles are contiguous), all small or all big, of at most `chunk` particles together
  // (or one neighbor alone), or of at most `source_chunk` where each further neighbor saves a
  // padded batch of 32 sources (docs/design.md §3: 3-4% on boxes of random sizes, exact boxes as
  // before). Mutual items take a group as sources in ranges of source_chunk, as targets in chunks.
  // A group is computed as one source range, so the last batch of 32 sources is padded once per
  // group rather than once per box, and there are fewer items: on 2D clusters at level 11 the
  // lanes' use went from 66% to 70% and the items from 112k to 67k (counted from the tree). Returns the group starting at list entry l and sets `next`.
  __device__ Run group(std::uint32_t l, std::uint32_t stop, std::uint32_t& next) const {
    const std::uint32_t b = half_ids[l];
    Run run = box_run(b);
    next = l + 1;
    while (next < stop && half_ids[next] == half_ids[next - 1] + 1 && is_small(half_ids[next]) == run.small) {
      const std::uint32_t end = box_first[half_ids[next] + 1], total = end - run.first;
      const bool saves = (total + 31) / 32 < (run.size() + 31) / 32 + (end - run.end + 31) / 32;
      if (total > chunk && !(total <= source_chunk && saves)) break;
      run.end = end;
      ++next;
    }
    return run;
  }
  // A run as the sources of mutual items: ranges of source_chunk, the last one shorter.
  __device__ std::uint32_t source_chunks(const Run& run) const { return (run.size() + source_chunk - 1) / source_chunk; }
  __device__ void source_range(const Run& run, std::uint32_t ci, std::uint32_t& first, std::uint32_t& end) const {
    first = run.first + ci * source_chunk;
    end = min(run.end, first + source_chunk);
  }
  // The items of box k with a neighbor group: both big, target chunks x source ranges, mutual; one small, the
  // big one's chunks against the small one, one-sided; both small, none.
  // In 64 bits, like count: a giant box's chunk pairs may exceed the list's 32-bit index, which
  // the list then refuses (plan/work_list.cuh).
  __device__ std::uint64_t link_items(const Run& k, const Run& nb) const {
    if (k.small && nb.small) return 0;
    if (k.small) return chunks(nb);
    if (nb.small) return chunks(k);
    return std::uint64_t(chunks(k)) * source_chunks(nb);
  }
  // Items of non-empty box k: chunk pairs of the box with itself (big boxes), then each group.
  __device__ std::uint64_t count(std::uint32_t k) const {
    const Run own = box_run(k);
    const std::uint64_t c = own.small ? 0 : chunks(own);
    std::uint64_t total = c * (c + 1) / 2;
    for (std::uint32_t l = half_offset[k], stop = half_offset[k + 1], next = 0; l < stop; l = next)
      total += link_items(own, group(l, stop, next));
    return total;
  }
  __device__ PairItem chunk_pair(const Run& a, std::uint32_t ca, const Run& b, std::uint32_t cb) const {
    PairItem it{0, 0, 0, 0, 0u};
    chunk_range(a, ca, it.a_begin, it.a_end);
    chunk_range(b, cb, it.b_begin, it.b_end);
    return it;
  }
  // Chunk ca of run a against source range cb of run b, mutual.
  __device__ PairItem chunk_vs_sources(const Run& a, std::uint32_t ca, const Run& b, std::uint32_t cb) const {
    PairItem it{0, 0, 0, 0, 0u};
    chunk_range(a, ca, it.a_begin, it.a_end);
    source_range(b, cb, it.b_begin, it.b_end);
    return it;
  }
  // Chunk ca of big run a against the whole of small run b, one-sided.
  __device__ PairItem chunk_vs_small(const Run& a, std::uint32_t ca, const Run& b) const {
    PairItem it{0, 0, b.first, b.end, 1u};
    chunk_range(a, ca, it.a_begin, it.a_end);
    return it;
  }
  // The planner's item (plan/work_list.cuh): item `local` of box k's, decoded into which chunk
  // pair of which (box, neighbor group) it is; its class is its target count's size class.
  __device__ PairItem item(std::uint32_t k, std::uint32_t local, std::uint32_t, std::uint32_t& klass) const {
    const PairItem it = decode(k, local);
    const std::uint32_t targets = it.a_end - it.a_begin;
    klass = 0;
    while (klass + 1 < PairItemList::kClasses && (8u << klass) < targets) ++klass;
    return it;
  }
  __device__ PairItem decode(std::uint32_t k, std::uint32_t local) const {
    const Run own = box_run(k);
    const std::uint32_t c = own.small ? 0 : chunks(own);
    const std::uint64_t self = std::uint64_t(c) * (c + 1) / 2;  // 64-bit, as in count()
    if (local < self) {
      // Row ci holds the chunk pairs (ci, ci), (ci, ci + 1), ..., (ci, c - 1).
      std::uint32_t ci = 0;
      while (local >= c - ci) local -= c - ci++;
      return chunk_pair(own, ci, own, ci + local);
    }
    local -= static_cast<std::uint32_t>(self);  // local >= self: self fits 32 bits
    for (std::uint32_t l = half_offset[k], stop = half_offset[k + 1], next = 0;; l = next) {
      const Run nb = group(l, stop, next);
      const std::uint64_t here = link_items(own, nb);
      if (local < here) {
        if (own.small) return chunk_vs_small(nb, local, own);  // the group's chunks against this small box
        if (nb.small) return chunk_vs_small(own, local, nb);   // this box's chunks against the small group
        const std::uint32_t cn = source_chunks(nb);
        return chunk_vs_sources(own, local / cn, nb, local % cn);
      }
      local -= here;
    }
  }
};

}  // namespace

void PairItemList::count(const std::uint32_t* box_first, std::uint32_t m, const std::uint32_t* half_offset,
                         const std::uint32_t* half_ids, std::uint32_t chunk, bool classify, const std::uint8_t* small) {
  box_first_ = box_first, half_offset_ = half_offset, half_ids_ = half_ids, chunk_ = chunk, small_ = small;
  list_.count(BoxGraph{box_first, half_offset, half_ids, chunk, kSourceGroup * chunk, small}, m, classify ? kClasses : 1);
}

void PairItemList::fill() {
  list_.fill(BoxGraph{box_first_, half_offset_, half_ids_, chunk_, kSourceGroup * chunk_, small_});
}

}  // namespace nf
