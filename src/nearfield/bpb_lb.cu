// bpb-lb: the original BPB's arithmetic with load balance. BPB gives each box one block, so on
// clustered input a few blocks grind through giant boxes while the GPU idles. Here the near field
// is cut into work items of bounded size: a chunk of at most 512 targets of a box against a
// segment of at most kSegment of its sources (the box itself, then its neighbors in list order,
// seen as one long list). Each item is one block with one thread per target, staging the sources
// in shared memory as bpb does (tiles gather sources across box boundaries). Items come in size
// classes (blocks of 32 .. 512 threads). The thread path (small_boxes.cuh) takes ppt's mapping,
// one thread per particle, for boxes of fewer than 32 particles with a small near field, and for
// the last partial warp of a bigger box (a few targets that would keep a whole warp busy), so
// blocks idle few lanes. An item that holds all of its targets' sources adds its result
// (on uniform input that is every box: bpb's mapping, one block per box); the items of a box
// whose sources were split write partial sums, and a second pass adds them in segment order, so
// the result is deterministic.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "nearfield/bpb_agent.cuh"
#include "nearfield/small_boxes.cuh"

namespace nf {
namespace {

struct BpbLbPolicy {
  // Sources per item. A whole level-7 P = 512 box (9 x 512 sources) fits, so uniform input keeps
  // BPB's one block per box; a 100k-particle core box becomes a few hundred items.
  static constexpr std::uint32_t kSegment = 16384;
  static constexpr std::uint32_t kMaxThreads = box_tiles::BoxBlockPolicy::max_threads;  // 512
  static constexpr int kClasses = 5;  // blocks of 32, 64, 128, 256, 512 threads
};

//! Targets [t0, t1) of box `box` against its sources [v0, v1) in list order (own box first).
//! slot: first partial-sum slot of the item's (box, chunk), or kWhole when v0..v1 is everything.
struct SourceItem {
  std::uint32_t t0, t1, v0, v1, box, slot, segments, pad;
};
constexpr std::uint32_t kWhole = 0xFFFFFFFFu;

__device__ std::uint32_t block_class(std::uint32_t targets) {
  std::uint32_t c = 0;
  while (c + 1 < BpbLbPolicy::kClasses && (32u << c) < targets) ++c;
  return c;
}

struct NearList {  // compact: box k is [box_start[k], box_start[k + 1]), full neighbor lists
  const std::uint32_t *box_start, *offset, *ids;
  __device__ std::uint32_t count(std::uint32_t b) const { return box_start[b + 1] - box_start[b]; }
  __device__ std::uint32_t sources(std::uint32_t b) const {
    std::uint32_t s = count(b);
    for (std::uint32_t l = offset[b]; l < offset[b + 1]; ++l) s += count(ids[l]);
    return s;
  }
  __device__ std::uint32_t chunk_of(std::uint32_t n) const { return n <= BpbLbPolicy::kMaxThreads ? n : BpbLbPolicy::kMaxThreads; }
};

// Per non-empty box: its items, and its partial-sum slots (items of a box whose sources split).
// The box's first n - (threads[b + 1] - threads[b]) particles are the items' targets; the rest go
// one per thread (small_boxes.cuh).
__global__ void count_kernel(NearList g, std::uint32_t m, const std::uint32_t* threads, std::uint32_t* items,
                             std::uint32_t* partials) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k > m) return;
  if (k == m) {
    items[m] = partials[m] = 0;
    return;
  }
  const std::uint32_t b = k, n = g.count(b) - (threads[b + 1] - threads[b]), c = n ? gpu::div_up(n, g.chunk_of(n)) : 0;
  const std::uint32_t segs = gpu::div_up(g.sources(b), BpbLbPolicy::kSegment);
  items[k] = c * segs;
  partials[k] = segs > 1 ? c * segs : 0;
}

__global__ void fill_kernel(NearList g, std::uint32_t m, const std::uint32_t* threads, const std::uint32_t* item_offset,
                            const std::uint32_t* partial_offset, SourceItem* items, std::uint8_t* classes) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  const std::uint32_t b = k, n = g.count(b) - (threads[b + 1] - threads[b]);
  const std::uint32_t chunk = n ? g.chunk_of(n) : 1, c = gpu::div_up(n, chunk);
  const std::uint32_t total = g.sources(b), segs = gpu::div_up(total, BpbLbPolicy::kSegment);
  std::uint32_t out = item_offset[k];
  for (std::uint32_t ci = 0; ci < c; ++ci)
    for (std::uint32_t si = 0; si < segs; ++si, ++out) {
      const std::uint32_t t0 = g.box_start[b] + ci * chunk, t1 = min(t0 + chunk, g.box_start[b] + n);
      const std::uint32_t slot = segs > 1 ? partial_offset[k] + ci * segs + si : kWhole;
      items[out] = {t0, t1, si * BpbLbPolicy::kSegment, min((si + 1) * BpbLbPolicy::kSegment, total), b, slot, segs, 0};
      classes[out] = static_cast<std::uint8_t>(block_class(t1 - t0));
    }
}

constexpr int kMaxRanges = 27;  // the box itself and up to 26 neighbors (3D)

template <int D, class T, bool Guarded, bool Counting>
__global__ void bpb_lb_kernel(NearFieldView<T> v, NearList g, const SourceItem* __restrict__ items,
                              Acc4<T>* __restrict__ partial) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ std::uint32_t range_first[kMaxRanges], range_start[kMaxRanges + 1];
  Body<T>* tile = reinterpret_cast<Body<T>*>(smem);
  const SourceItem item = items[blockIdx.x];
  // The item's sources are positions [v0, v1) of the list "own box, then each neighbor": the
  // ranges of that list (first sorted index, and start position in the list) go to shared memory.
  const std::uint32_t nr = 1 + g.offset[item.box + 1] - g.offset[item.box];
  if (threadIdx.x < nr) {
    const std::uint32_t b = threadIdx.x == 0 ? item.box : g.ids[g.offset[item.box] + threadIdx.x - 1];
    range_first[threadIdx.x] = g.box_start[b];
    range_start[threadIdx.x + 1] = g.count(b);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    range_start[0] = 0;
    for (std::uint32_t r = 1; r <= nr; ++r) range_start[r] += range_start[r - 1];
  }
  const std::uint32_t i = item.t0 + threadIdx.x;
  const bool active = i < item.t1;
  BpbAgent<D, T, Guarded, Counting> agent{{v.eps2}, tile, active ? v.bodies[i] : Body<T>{0, 0, 0, 0}, {0, 0, 0, 0}, 0};
  const std::uint32_t self = i - g.box_start[item.box];  // the own box comes first in the list
  const std::uint32_t own_count = g.count(item.box);
  // Tiles gather sources across box boundaries, so small boxes fill whole tiles (one barrier pair
  // per blockDim sources, not per neighbor box). Each thread loads list position vb + threadIdx.x
  // of every tile; its range r (range_start[r] <= pos < range_start[r + 1]) only moves forward,
  // by one or two ranges a tile, so a cursor finds it (a binary search cost ~8% at P = 32).
  std::uint32_t r = 0;
  for (std::uint32_t vb = item.v0; vb < item.v1; vb += blockDim.x) {
    const std::uint32_t m = min(blockDim.x, item.v1 - vb);
    __syncthreads();
    if (threadIdx.x < m) {
      const std::uint32_t pos = vb + threadIdx.x;
      while (range_start[r + 1] <= pos) ++r;
      tile[threadIdx.x] = v.bodies[range_first[r] + pos - range_start[r]];
    }
    __syncthreads();
    // A tile with own-box sources leaves out the thread's own particle (self - vb wraps past m when
    // it is elsewhere); the others run the loop without that test (~0u: the compiler drops it),
    // as bpb does: the test is a compare and a branch in a loop of about ten instructions.
    if (active) {
      if (vb < own_count)
        agent.add_tile(m, self - vb);
      else
        agent.add_tile(m, ~0u);
    }
  }
  if (active) {
    if (item.slot == kWhole)
      add_into(v.acc + i, agent.acc);
    else
      partial[std::size_t(item.slot) * BpbLbPolicy::kMaxThreads + threadIdx.x] = agent.acc;
  }
  if constexpr (Counting) box_tiles::add_count(v.counter, agent.count);
}

// Second pass for split boxes: each target sums its chunk's segments in segment order.
template <class T>
__global__ void gather_kernel(const SourceItem* __restrict__ items, const Acc4<T>* __restrict__ partial,
                              Acc4<T>* __restrict__ acc) {
  const SourceItem item = items[blockIdx.x];
  if (item.slot == kWhole || item.v0 != 0) return;  // only the first segment of a split chunk
  const std::uint32_t i = item.t0 + threadIdx.x;
  if (i >= item.t1) return;
  Acc4<T> sum{0, 0, 0, 0};
  for (std::uint32_t s = 0; s < item.segments; ++s) {
    const Acc4<T> p = partial[std::size_t(item.slot + s) * BpbLbPolicy::kMaxThreads + threadIdx.x];
    sum.x += p.x;
    sum.y += p.y;
    sum.z += p.z;
  }
  add_into(acc + i, sum);
}

__global__ void class_histogram_kernel(const std::uint8_t* classes, std::uint32_t n, std::uint32_t* counts) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[classes[i]], 1u);
}

template <int D, class T>
class BpbLb final : public GpuNearFieldKernel<T> {
 public:
  void plan(const NearFieldView<T>& v) override {
    g_ = {v.box_first, v.near_offset, v.near_ids};
    n_ = 0;
    split_ = false;
    for (std::uint32_t& c : class_begin_) c = 0;
    const std::uint32_t m = v.computed_boxes;
    if (m == 0) return;
    gpu::DeviceBuffer<std::uint32_t> item_offset(m + 1), partial_offset(m + 1);
    std::size_t need = 0, bytes = 0;
    NF_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, need, item_offset.data(), item_offset.data(), static_cast<int>(m + 1)));
    gpu::DeviceBuffer<unsigned char> temp(need);
    small_.plan(v);
    count_kernel<<<gpu::div_up(m + 1, 256), 256>>>(g_, m, small_.thread_offset(), item_offset.data(),
                                                   partial_offset.data());
    NF_CUDA_LAUNCHED();
    NF_CUDA(cub::DeviceScan::ExclusiveSum(temp.data(), need, item_offset.data(), item_offset.data(), static_cast<int>(m + 1)));
    NF_CUDA(cub::DeviceScan::ExclusiveSum(temp.data(), need, partial_offset.data(), partial_offset.data(),
                                          static_cast<int>(m + 1)));
    std::uint32_t partials = 0;
    NF_CUDA(cudaMemcpy(&n_, item_offset.data() + m, sizeof(n_), cudaMemcpyDeviceToHost));
    NF_CUDA(cudaMemcpy(&partials, partial_offset.data() + m, sizeof(partials), cudaMemcpyDeviceToHost));
    split_ = partials > 0;
    if (n_ == 0) return;  // every target on the thread path
    gpu::DeviceBuffer<SourceItem> unsorted(n_);
    gpu::DeviceBuffer<std::uint8_t> classes(n_), sorted_classes(n_);
    items_ = gpu::DeviceBuffer<SourceItem>(n_);
    partial_ = gpu::DeviceBuffer<Acc4<T>>(std::size_t(partials) * BpbLbPolicy::kMaxThreads);
    fill_kernel<<<gpu::div_up(m, 256), 256>>>(g_, m, small_.thread_offset(), item_offset.data(), partial_offset.data(),
                                              unsorted.data(), classes.data());
    NF_CUDA_LAUNCHED();
    NF_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, classes.data(), sorted_classes.data(), unsorted.data(),
                                            items_.data(), static_cast<int>(n_), 0, 3));
    gpu::DeviceBuffer<unsigned char> sort_temp(bytes);
    NF_CUDA(cub::DeviceRadixSort::SortPairs(sort_temp.data(), bytes, classes.data(), sorted_classes.data(),
                                            unsorted.data(), items_.data(), static_cast<int>(n_), 0, 3));
    gpu::DeviceBuffer<std::uint32_t> counts(BpbLbPolicy::kClasses);
    counts.fill(0);
    class_histogram_kernel<<<gpu::div_up(n_, 256), 256>>>(classes.data(), n_, counts.data());
    NF_CUDA_LAUNCHED();
    const std::vector<std::uint32_t> c = counts.download();
    for (int k = 0; k < BpbLbPolicy::kClasses; ++k) class_begin_[k + 1] = class_begin_[k] + c[k];
  }
  void launch(const NearFieldView<T>& v) override {
    gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) { run<guarded(), counting()>(v); });
    if (split_) {
      gather_kernel<T><<<n_, BpbLbPolicy::kMaxThreads>>>(items_.data(), partial_.data(), v.acc);
      NF_CUDA_LAUNCHED();
    }
  }

 private:
  // The thread path and each class on a stream of their own: they write disjoint outputs, so their
  // launches overlap instead of each one's tail idling the GPU (at a fraction of a millisecond per
  // evaluation six launches in a row cost about a tenth). The streams are blocking streams: they
  // start after the default stream's earlier work, and its later work (the partial sums' pass,
  // the timing event) waits for them, so callers see one launch on the default stream. A single
  // launch (uniform input: one class) goes on the default stream itself: joining another stream
  // costs a few microseconds, ~5% of a 0.09 ms evaluation. The thread path goes first, then the
  // classes from the biggest blocks down, so that the longest-running launches do not start last
  // (H100, float, N = 2M, medians of 15, against the classes upwards: 2D clusters level 11 0.50
  // against 0.53-0.56 ms, 3D Plummer level 8 1.72 against 1.89; 2D clusters level 10 1.73
  // against 1.69-1.70, the one point it costs).
  template <bool Guarded, bool Counting>
  void run(const NearFieldView<T>& v) {
    int launches = small_.any() ? 1 : 0;
    for (int c = 0; c < BpbLbPolicy::kClasses; ++c) launches += class_begin_[c + 1] > class_begin_[c];
    const auto stream = [&](int s) { return launches > 1 ? static_cast<cudaStream_t>(streams_[s].handle()) : cudaStream_t{}; };
    small_.launch<D, T, Guarded, Counting>(v, stream(BpbLbPolicy::kClasses));
    for (int c = BpbLbPolicy::kClasses - 1; c >= 0; --c) {
      const std::uint32_t count = class_begin_[c + 1] - class_begin_[c];
      if (count == 0) continue;
      const std::uint32_t threads = 32u << c;
      bpb_lb_kernel<D, T, Guarded, Counting><<<count, threads, threads * sizeof(Body<T>), stream(c)>>>(
          v, g_, items_.data() + class_begin_[c], partial_.data());
      NF_CUDA_LAUNCHED();
    }
  }

  NearList g_{};
  std::uint32_t n_ = 0;
  bool split_ = false;
  SmallBoxes small_{BpbLbPolicy::kSegment};  // remainders too, of boxes whose sources are not split
  gpu::Stream streams_[BpbLbPolicy::kClasses + 1];  // one per class, and the thread path's
  std::uint32_t class_begin_[BpbLbPolicy::kClasses + 1] = {};
  gpu::DeviceBuffer<SourceItem> items_;
  gpu::DeviceBuffer<Acc4<T>> partial_;
};

}  // namespace

NF_EXPORT_GPU_NEAR_FIELD(bpb_lb, BpbLb)

}  // namespace nf
