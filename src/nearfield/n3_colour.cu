// n3-colour: Newton's third law, deterministic and without atomics. The links of the half near
// field (a box with itself, a box with a non-empty neighbor) are coloured so that no two links of
// one colour share a box, and the colours run one after another: within a colour every warp owns
// its two boxes outright and adds into acc with plain loads and stores. A link's colour is its
// direction class (the neighbor offset up to sign) and the parity of its lower box along the
// first axis where the offset is non-zero: two links of one direction that share a box are
// consecutive along that axis, so their lower boxes differ in parity. 9 colours in 2D, 27 in 3D.
// The sum for a particle therefore runs in a fixed order (colour, then link, then source batch),
// whatever the scheduling: repeated runs agree bit for bit. A warp computes its link with lane
// rotation (rotate_agent.cuh), target chunks of 32 R against the whole other box.
#include <cub/device/device_radix_sort.cuh>

#include "nearfield/n3_common.cuh"
#include "nearfield/rotate_agent.cuh"
#include "tree/morton.h"

namespace nf {
namespace {

constexpr int kMaxColours = 64;  // 1 + 2 * 3^3 codes fit in 6 bits

//! A box with itself (a_begin == b_begin) or with a non-empty half neighbor.
struct Link {
  std::uint32_t a_begin, a_end, b_begin, b_end;
};

// Colour of the link between boxes of Morton keys a and b: 0 for a box with itself, else
// 1 + 2 * code(canonical offset) + parity of the lower box along the offset's first axis.
template <int D>
__device__ std::uint8_t link_colour(std::uint64_t a, std::uint64_t b) {
  if (a == b) return 0;
  std::uint32_t ca[D], cb[D];
  morton_coords<D>(a, ca);
  morton_coords<D>(b, cb);
  int v[D];
  int first = -1;
  for (int k = 0; k < D; ++k) {
    v[k] = int(cb[k]) - int(ca[k]);
    if (first < 0 && v[k] != 0) first = k;
  }
  const bool flip = v[first] < 0;  // canonical offset: first non-zero component positive
  int code = 0;
  for (int k = D - 1; k >= 0; --k) code = code * 3 + ((flip ? -v[k] : v[k]) + 1);
  const std::uint32_t lower = flip ? cb[first] : ca[first];
  return static_cast<std::uint8_t>(1 + 2 * code + (lower & 1u));
}

// Links of compact box k: itself, then each (non-empty) half neighbor. Offsets come from the half
// list's own offsets: box k's links start at k + half_offset[k].
template <int D>
__global__ void fill_links_kernel(const std::uint64_t* box_key, const std::uint32_t* first, std::uint32_t m,
                                  const std::uint32_t* half_offset, const std::uint32_t* half_ids, Link* links,
                                  std::uint8_t* colours) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  std::uint32_t out = k + half_offset[k];
  links[out] = {first[k], first[k + 1], first[k], first[k + 1]};
  colours[out++] = 0;
  for (std::uint32_t l = half_offset[k]; l < half_offset[k + 1]; ++l) {
    const std::uint32_t nb = half_ids[l];
    links[out] = {first[k], first[k + 1], first[nb], first[nb + 1]};
    colours[out++] = link_colour<D>(box_key[k], box_key[nb]);
  }
}

__global__ void colour_histogram_kernel(const std::uint8_t* colours, std::uint32_t n, std::uint32_t* counts) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[colours[i]], 1u);
}

struct ColourPolicy {
  static constexpr int warps = 4;  // warps per block, each on its own links of the colour (not tuned, as n3-rotate's)
};

// One colour: each warp takes links and computes them whole, target chunk by target chunk.
template <int D, class T, int R, bool Guarded, bool Counting>
__global__ void __launch_bounds__(32 * ColourPolicy::warps)
    colour_kernel(NearFieldView<T> v, const Link* __restrict__ links, std::uint32_t n_links, std::uint32_t* next) {
  __shared__ Body<T> tiles[ColourPolicy::warps][32];
  const unsigned lane = threadIdx.x & 31u;
  Body<T>* tile = tiles[threadIdx.x / 32];
  RotateAgent<D, T, R, Guarded, Counting> agent{{v.eps2}, {}, lane, 0};
  auto sink = [&](std::uint32_t j, const Acc4<T>& react) { warp_pairs::add_plain_to<D>(v.acc + j, react); };
  for (std::uint32_t it = warp_pairs::next_item(next, lane); it < n_links; it = warp_pairs::next_item(next, lane)) {
    const Link link = links[it];
    const bool self = link.a_begin == link.b_begin;
    for (std::uint32_t ta = link.a_begin; ta < link.a_end; ta += 32u * R) {
      agent.t.load(v.bodies, ta, min(ta + 32u * R, link.a_end), lane);
      // A box with itself: the chunk against itself (i < j) and every later chunk; else the whole
      // neighbor box.
      warp_pairs::sweep_sources(agent, v.bodies, self ? ta : link.b_begin, link.b_end, self, true, tile, lane, sink);
      agent.t.add_plain(v.acc);
      __syncwarp();  // the next chunk's sweep may read what this one wrote through other lanes
    }
  }
  if constexpr (Counting) box_tiles::add_count(v.counter, agent.count);
}

template <int D, class T>
class N3Colour final : public GpuNearFieldKernel<T> {
 public:
  void plan(const NearFieldView<T>& v) override {
    r_ = warp_pairs::targets_per_lane(v.max_box_count, warp_pairs::max_targets_per_lane<T>());
    n_ = 0;
    const std::uint32_t m = v.computed_boxes;
    for (std::uint32_t& c : colour_begin_) c = 0;
    if (m == 0) return;
    std::uint32_t half_links = 0;
    NF_CUDA(cudaMemcpy(&half_links, v.near_offset + m, sizeof(half_links), cudaMemcpyDeviceToHost));
    n_ = m + half_links;
    std::size_t bytes = 0;
    gpu::DeviceBuffer<Link> unsorted(n_);
    gpu::DeviceBuffer<std::uint8_t> colours(n_), sorted_colours(n_);
    links_ = gpu::DeviceBuffer<Link>(n_);
    fill_links_kernel<D><<<gpu::div_up(m, 256), 256>>>(v.box_key, v.box_first, m, v.near_offset, v.near_ids,
                                                       unsorted.data(), colours.data());
    NF_CUDA_LAUNCHED();
    // Stable: within a colour the links keep their Z-order.
    NF_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, colours.data(), sorted_colours.data(), unsorted.data(),
                                            links_.data(), static_cast<int>(n_), 0, 6));
    gpu::DeviceBuffer<unsigned char> sort_temp(bytes);
    NF_CUDA(cub::DeviceRadixSort::SortPairs(sort_temp.data(), bytes, colours.data(), sorted_colours.data(),
                                            unsorted.data(), links_.data(), static_cast<int>(n_), 0, 6));
    gpu::DeviceBuffer<std::uint32_t> counts(kMaxColours);
    counts.fill(0);
    colour_histogram_kernel<<<gpu::div_up(n_, 256), 256>>>(colours.data(), n_, counts.data());
    NF_CUDA_LAUNCHED();
    const std::vector<std::uint32_t> c = counts.download();
    for (int k = 0; k < kMaxColours; ++k) colour_begin_[k + 1] = colour_begin_[k] + c[k];
    if (counters_.size() == 0) counters_ = gpu::DeviceBuffer<std::uint32_t>(kMaxColours);
  }
  void launch(const NearFieldView<T>& v) override {
    if (n_ == 0) return;
    counters_.fill(0);
    warp_pairs::dispatch_r<warp_pairs::max_targets_per_lane<T>()>(r_, [&](auto r) {
      gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) { run<r(), guarded(), counting()>(v); });
    });
  }

 private:
  template <int R, bool Guarded, bool Counting>
  void run(const NearFieldView<T>& v) {
    auto kernel = colour_kernel<D, T, R, Guarded, Counting>;
    const int threads = 32 * ColourPolicy::warps;
    const unsigned resident = warp_pairs::resident_blocks(kernel, threads, 0);
    for (int c = 0; c < kMaxColours; ++c) {  // one launch per colour: the launches order the colours
      const std::uint32_t count = colour_begin_[c + 1] - colour_begin_[c];
      if (count == 0) continue;
      const unsigned grid = std::min<unsigned>(resident, gpu::div_up(count, ColourPolicy::warps));
      kernel<<<grid, threads>>>(v, links_.data() + colour_begin_[c], count, counters_.data() + c);
      NF_CUDA_LAUNCHED();
    }
  }

  int r_ = 1;
  std::uint32_t n_ = 0;
  std::uint32_t colour_begin_[kMaxColours + 1] = {};
  gpu::DeviceBuffer<Link> links_;
  gpu::DeviceBuffer<std::uint32_t> counters_;
};

}  // namespace

NF_EXPORT_GPU_NEAR_FIELD(n3_colour, N3Colour)

}  // namespace nf
