// bpb-lb: the original BPB's arithmetic with load balance. BPB gives each box one block, so on
// clustered input a few blocks grind through giant boxes while the GPU idles. Here the near field
// is cut into work items of bounded size: a chunk of at most 512 targets of a box against a
// segment of at most kSegment of its sources (the box itself, then its neighbors in list order,
// seen as one long list). Each item is one block with one thread per target, staging the sources
// in shared memory as bpb does (tiles gather sources across box boundaries). Items come in size
// classes (blocks of 32 .. 512 threads). Boxes of at most 32 particles with a small near field
// take the small-box paths (small_boxes.cuh: a thread per particle, or a warp per box), and so
// does the last partial warp of a bigger box (a few targets that would keep a whole warp busy,
// one thread each), so blocks idle few lanes. An item that holds all of its targets' sources adds its result
// (on uniform input that is every box: bpb's mapping, one block per box); the items of a box
// whose sources were split write partial sums, and a second pass adds them in segment order, so
// the result is deterministic.
#include "nearfield/bpb_agent.cuh"
#include "nearfield/plan/box_lists.cuh"
#include "nearfield/plan/class_launcher.h"
#include "nearfield/plan/work_list.cuh"
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
//! partial: first partial-sum row of the item's (box, chunk), or kWhole when v0..v1 is everything.
struct SourceItem {
  std::uint32_t t0, t1, v0, v1, box, partial, segments, pad;
};
constexpr std::uint32_t kWhole = 0xFFFFFFFFu;

// A box's items (the plan, plan/work_list.cuh): its first n - threads(b) particles are the items'
// targets (a small box goes whole, and the rest of a bigger box one per thread, small_boxes.cuh), cut into chunks of at most kMaxThreads;
// its sources (own box, then each neighbor) into segments of at most kSegment; one item per
// (chunk, segment), with a partial-sum row each when the sources split.
struct LbPlanner {
  plan::BoxLists g;                // full neighbor lists
  SmallBoxView small;              // what the small-box paths leave to the items
  const std::uint32_t* partial;    // per box: its first partial-sum row (PartialCounter, scanned)
  __device__ std::uint32_t targets(std::uint32_t b) const { return small.item_targets(b, g.count(b)); }
  __device__ static std::uint32_t chunk_of(std::uint32_t n) {
    return n <= BpbLbPolicy::kMaxThreads ? n : BpbLbPolicy::kMaxThreads;
  }
  __device__ static std::uint32_t segments(std::uint32_t sources) { return gpu::div_up(sources, BpbLbPolicy::kSegment); }
  __device__ std::uint64_t count(std::uint32_t b) const {  // 64-bit: see plan/work_list.cuh
    const std::uint32_t n = targets(b);
    return n ? std::uint64_t(gpu::div_up(n, chunk_of(n))) * segments(g.sources(b)) : 0;
  }
  __device__ SourceItem item(std::uint32_t b, std::uint32_t local, std::uint32_t, std::uint32_t& klass) const {
    const std::uint32_t n = targets(b), chunk = chunk_of(n), total = g.sources(b), segs = segments(total);
    const std::uint32_t ci = local / segs, si = local % segs;
    const std::uint32_t t0 = g.first[b] + ci * chunk, t1 = min(t0 + chunk, g.first[b] + n);
    klass = 0;  // blocks of 32 << klass threads
    while (klass + 1 < BpbLbPolicy::kClasses && (32u << klass) < t1 - t0) ++klass;
    const std::uint32_t row = segs > 1 ? partial[b] + ci * segs + si : kWhole;
    return {t0, t1, si * BpbLbPolicy::kSegment, min((si + 1) * BpbLbPolicy::kSegment, total), b, row, segs, 0};
  }
};

// Partial-sum rows per box: one per item when its sources split, else none.
struct PartialCounter {
  LbPlanner p;
  __device__ std::uint64_t count(std::uint32_t b) const {
    return LbPlanner::segments(p.g.sources(b)) > 1 ? p.count(b) : 0;
  }
};

constexpr int kMaxRanges = 27;  // the box itself and up to 26 neighbors (3D)

template <int D, class T, bool Guarded, bool Counting>
__global__ void bpb_lb_kernel(NearFieldView<T> v, plan::BoxLists g, const SourceItem* __restrict__ items,
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
    range_first[threadIdx.x] = g.first[b];
    range_start[threadIdx.x + 1] = g.count(b);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    range_start[0] = 0;
    for (std::uint32_t r = 1; r <= nr; ++r) range_start[r] += range_start[r - 1];
  }
  const std::uint32_t i = item.t0 + threadIdx.x;
  const bool active = i < item.t1;
  // An item with all of its targets' sources starts from their output (it adds into it); a
  // segment of split sources from zero (a partial sum).
  const bool whole = item.partial == kWhole;
  BpbAgent<D, T, Guarded, Counting> agent{{v.eps2},
                                          tile,
                                          active ? v.bodies[i] : Body<T>{0, 0, 0, 0},
                                          active && whole ? output_start(v.acc + i, v.acc_zero) : Acc4<T>{0, 0, 0, 0},
                                          0};
  const std::uint32_t self = i - g.first[item.box];  // the own box comes first in the list
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
    if (whole)
      v.acc[i] = agent.acc;
    else
      partial[std::size_t(item.partial) * BpbLbPolicy::kMaxThreads + threadIdx.x] = agent.acc;
  }
  if constexpr (Counting) box_tiles::add_count(v.counter, agent.count);
}

// Second pass for split boxes: each target sums its chunk's segments in segment order.
template <class T>
__global__ void gather_kernel(const SourceItem* __restrict__ items, const Acc4<T>* __restrict__ partial,
                              Acc4<T>* __restrict__ acc) {
  const SourceItem item = items[blockIdx.x];
  if (item.partial == kWhole || item.v0 != 0) return;  // only the first segment of a split chunk
  const std::uint32_t i = item.t0 + threadIdx.x;
  if (i >= item.t1) return;
  Acc4<T> sum{0, 0, 0, 0};
  for (std::uint32_t s = 0; s < item.segments; ++s) {
    const Acc4<T> p = partial[std::size_t(item.partial + s) * BpbLbPolicy::kMaxThreads + threadIdx.x];
    sum.x += p.x;
    sum.y += p.y;
    sum.z += p.z;
  }
  add_into(acc + i, sum);
}

template <int D, class T>
class BpbLb final : public GpuNearFieldKernel<T> {
 public:
  void plan(const NearFieldView<T>& v) override {
    g_ = {v.box_first, v.near_offset, v.near_ids};
    const std::uint32_t m = v.computed_boxes;
    // Every list's counts first, then the totals, then the fills (plan/work_list.cuh: one wait for
    // the device instead of four); the planners read the small boxes' kinds and offsets on the
    // device.
    small_.plan_counts(v);
    LbPlanner planner{g_, small_.view(), nullptr};
    partials_.count(PartialCounter{planner}, m);
    planner.partial = partials_.offsets();
    items_.count(planner, m, BpbLbPolicy::kClasses);
    small_.read_totals();
    partials_.read_total();
    items_.read_total();
    split_ = partials_.total() > 0;
    const std::size_t rows = std::size_t(partials_.total()) * BpbLbPolicy::kMaxThreads;
    plan::reserve(partial_, rows);
    small_.fill();
    items_.fill(planner);
  }
  void launch(const NearFieldView<T>& v) override {
    gpu::dispatch_mode(v.counter, v.guarded, [&](auto guarded, auto counting) { run<guarded(), counting()>(v); });
    if (split_) {
      gather_kernel<T><<<items_.size(), BpbLbPolicy::kMaxThreads>>>(items_.items(), partial_.data(), v.acc);
      NF_CUDA_LAUNCHED();
    }
  }

 private:
  // The thread path and each class on a stream of their own (plan/class_launcher.h): they write
  // disjoint outputs, so their launches overlap; at a fraction of a millisecond per evaluation, six
  // launches in a row would cost about a tenth.
  template <bool Guarded, bool Counting>
  void run(const NearFieldView<T>& v) {
    launcher_.launch(
        small_.any(), [&](int c) { return items_.class_size(c); },
        [&](void* stream) { small_.launch<D, T, Guarded, Counting>(v, stream); },
        [&](int c, void* stream) {
          const std::uint32_t threads = 32u << c;
          bpb_lb_kernel<D, T, Guarded, Counting>
              <<<items_.class_size(c), threads, threads * sizeof(Body<T>), static_cast<cudaStream_t>(stream)>>>(
                  v, g_, items_.items() + items_.class_begin(c), partial_.data());
          NF_CUDA_LAUNCHED();
        });
  }

  plan::BoxLists g_{};
  bool split_ = false;
  SmallBoxes small_{BpbLbPolicy::kSegment};  // remainders too, of boxes whose sources are not split
  plan::ClassLauncher<BpbLbPolicy::kClasses> launcher_;
  plan::BoxOffsets partials_;  // partial-sum rows per box
  plan::WorkList<SourceItem> items_;
  gpu::DeviceBuffer<Acc4<T>> partial_;
};

}  // namespace

NF_EXPORT_GPU_NEAR_FIELD(bpb_lb, BpbLb)

}  // namespace nf
