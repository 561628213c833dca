// The GPU tree builder (host code): allocation once per (dim, level, N), then the stages of
// tree_gpu_stages.h in order, each timed by its own pair of CUDA events.
#include <algorithm>
#include <stdexcept>

#include "core/errors.h"
#include "tree/tree_gpu.h"
#include "tree/tree_gpu_stages.h"

namespace nf {
namespace {

using Field = double GpuBuildTimes::*;

// Times the stages of one build when asked: run(field, stage) brackets the stage with events
// and, at finish(), writes its time into times->*field; `total` has events of its own.
class StageClock {
 public:
  StageClock(tree_gpu::Scratch& s, GpuBuildTimes* times) : s_(s), times_(times) {
    if (times_) {
      *times_ = GpuBuildTimes{};
      s_.total_timer.start();
    }
  }
  template <class Stage>
  void run(Field field, Stage&& stage) {
    if (!times_) return stage();
    if (used_ == kMax) throw std::logic_error("StageClock: more stages than timers");
    s_.stage_timer[used_].start();
    stage();
    s_.stage_timer[used_].stop();
    fields_[used_++] = field;
  }
  void finish() {
    if (!times_) return;
    s_.total_timer.stop();
    for (int k = 0; k < used_; ++k) times_->*fields_[k] = s_.stage_timer[k].elapsed_ms();
    times_->total = s_.total_timer.elapsed_ms();
  }

 private:
  static constexpr int kMax = 6;
  tree_gpu::Scratch& s_;
  GpuBuildTimes* times_;
  Field fields_[kMax] = {};
  int used_ = 0;
};

template <class T>
std::vector<T> download_prefix(const gpu::DeviceBuffer<T>& b, std::size_t count) {
  if (count > b.size()) throw std::logic_error("download_prefix: more than the buffer holds");
  std::vector<T> host(count);
  if (count) gpu::copy_to_host(host.data(), b.data(), count * sizeof(T));
  return host;
}

}  // namespace

GpuTreeBuilder::GpuTreeBuilder(int dim, int level, std::size_t n, bool dense, bool lists) {
  gpu::require("the GPU tree builder");  // before any CUDA call (the scratch's events)
  check_level(dim, level, n, gpu::device_info().free_bytes, "free GPU memory", dense);
  if (n > 0x7FFFFFFFull) throw UsageError("the GPU builder takes at most 2^31 - 1 particles");
  if (dense && !lists) throw std::logic_error("GpuTreeBuilder: the dense layout comes with the neighbor lists");
  s_ = std::make_unique<tree_gpu::Scratch>();
  DeviceTree& t = tree_;
  t.dim = dim;
  t.level = level;
  t.nbox = std::uint64_t(1) << (dim * level);
  t.n = static_cast<std::uint32_t>(n);
  t.dense = dense;
  t.lists = lists;
  const std::size_t boxes = static_cast<std::size_t>(std::min<std::uint64_t>(n, t.nbox));  // M at most
  t.order = gpu::DeviceBuffer<std::uint32_t>(n);
  t.box_key = gpu::DeviceBuffer<std::uint64_t>(boxes);
  t.box_first = gpu::DeviceBuffer<std::uint32_t>(boxes + 1);
  t.particle_compact_box = gpu::DeviceBuffer<std::uint32_t>(n);
  if (lists) {
    t.near_full_offset = gpu::DeviceBuffer<std::uint32_t>(boxes + 1);
    t.near_half_offset = gpu::DeviceBuffer<std::uint32_t>(boxes + 1);
  }
  std::size_t counts = boxes + 1;
  if (dense) {
    const std::size_t nbox = static_cast<std::size_t>(t.nbox);
    const std::uint64_t links = full_link_count(dim, level);
    t.box_start = gpu::DeviceBuffer<std::uint32_t>(nbox + 1);
    t.particle_box = gpu::DeviceBuffer<std::uint32_t>(n);
    t.nonempty = gpu::DeviceBuffer<std::uint32_t>(boxes);
    t.full_offset = gpu::DeviceBuffer<std::uint32_t>(nbox + 1);
    t.half_offset = gpu::DeviceBuffer<std::uint32_t>(nbox + 1);
    t.full_ids = gpu::DeviceBuffer<std::uint32_t>(links);
    t.half_ids = gpu::DeviceBuffer<std::uint32_t>(links / 2);
    counts = std::max(counts, nbox + 1);
  }

  tree_gpu::Scratch& s = *s_;
  s.keys = gpu::DeviceBuffer<std::uint64_t>(n);
  s.sorted_keys = gpu::DeviceBuffer<std::uint64_t>(n);
  s.index = gpu::DeviceBuffer<std::uint32_t>(n);
  if (lists) {
    s.full_count = gpu::DeviceBuffer<std::uint32_t>(counts);
    s.half_count = gpu::DeviceBuffer<std::uint32_t>(counts);
  }
  s.counters = gpu::DeviceBuffer<std::uint32_t>(tree_gpu::kCounters);
  s.summary = gpu::DeviceBuffer<tree_gpu::BuildSummary>(1);
  if (lists && t.nbox <= tree_gpu::kMapBoxes && t.nbox <= tree_gpu::kMapBoxesPerParticle * std::max<std::uint64_t>(n, 1))
    s.box_map = gpu::DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(t.nbox));
  s.bounds = gpu::DeviceBuffer<tree_gpu::DomainBounds>(1);
  s.domain = gpu::DeviceBuffer<Domain>(1);
  tree_gpu::init_domain_bounds(s);
  // One temporary allocation large enough for every CUB call of the build.
  std::size_t temp = std::max({tree_gpu::sort_temp_bytes(n, dim * level), tree_gpu::boxes_temp_bytes(n),
                               lists ? tree_gpu::neighbors_temp_bytes(boxes) : 0, std::size_t(1)});
  if (dense) temp = std::max(temp, tree_gpu::dense_temp_bytes(t.nbox));
  s.temp = gpu::DeviceBuffer<unsigned char>(temp);
}

GpuTreeBuilder::~GpuTreeBuilder() = default;

void GpuTreeBuilder::build(const DeviceParticles& p, const Domain* domain, GpuBuildTimes* times) {
  DeviceTree& t = tree_;
  tree_gpu::Scratch& s = *s_;
  if (p.dim != t.dim || p.n != t.n) throw std::logic_error("GpuTreeBuilder::build: particles do not match the builder");
  StageClock clock(s, times);
  clock.run(&GpuBuildTimes::domain, [&] {
    if (domain)
      gpu::copy_to_device(s.domain.data(), domain, sizeof(Domain));
    else if (p.bounds_valid)
      tree_gpu::domain_from_bounds(p, s);
    else
      tree_gpu::reduce_domain(p, s);
  });
  clock.run(&GpuBuildTimes::keys, [&] { tree_gpu::compute_keys(p, t.level, s); });
  clock.run(&GpuBuildTimes::sort, [&] { tree_gpu::sort_keys(t, s); });
  clock.run(&GpuBuildTimes::box_starts, [&] { tree_gpu::find_boxes(t, s); });
  if (t.lists) clock.run(&GpuBuildTimes::neighbors, [&] { tree_gpu::build_compact_lists(t, s); });
  // The one read of the build: M, the largest box, the list totals and the domain. The stages
  // above ran over capacities, reading M on the device, so none waited for the host.
  const tree_gpu::BuildSummary sum = tree_gpu::read_summary(s, t);
  t.nonempty_count = sum.counters[tree_gpu::kBoxes];
  t.max_box_count = sum.counters[tree_gpu::kMaxCount];
  t.near_full_links = sum.counters[tree_gpu::kFullLinks];
  t.near_half_links = sum.counters[tree_gpu::kHalfLinks];
  t.domain = sum.domain;
  // An id buffer too small for the totals (the first build, or more links than ever before).
  if (t.lists && (t.near_full_links > t.near_full_ids.size() || t.near_half_links > t.near_half_ids.size()))
    tree_gpu::refill_compact_lists(t, s);
  tree_gpu::clear_map(t, s);
  if (t.dense) clock.run(&GpuBuildTimes::dense, [&] { tree_gpu::build_dense(t, s); });
  clock.finish();
}

Tree download_tree(const DeviceTree& t) {
  Tree h;
  h.dim = t.dim;
  h.level = t.level;
  h.domain = t.domain;
  h.nbox = t.nbox;
  const std::uint32_t m = t.nonempty_count;
  h.order = download_prefix(t.order, t.n);
  h.box_key = download_prefix(t.box_key, m);
  h.box_first = download_prefix(t.box_first, std::size_t(m) + 1);
  h.particle_compact_box = download_prefix(t.particle_compact_box, t.n);
  if (t.lists) {  // else no lists: empty offsets and ids
    h.near_full.offset = download_prefix(t.near_full_offset, std::size_t(m) + 1);
    h.near_half.offset = download_prefix(t.near_half_offset, std::size_t(m) + 1);
  }
  h.near_full.ids = download_prefix(t.near_full_ids, t.near_full_links);
  h.near_half.ids = download_prefix(t.near_half_ids, t.near_half_links);
  h.dense = t.dense;
  if (t.dense) {
    h.box_start = t.box_start.download();
    h.particle_box = t.particle_box.download();
    h.nonempty = download_prefix(t.nonempty, m);
    h.full.offset = t.full_offset.download();
    h.full.ids = t.full_ids.download();
    h.half.offset = t.half_offset.download();
    h.half.ids = t.half_ids.download();
  }
  return h;
}

}  // namespace nf
