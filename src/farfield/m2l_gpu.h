#pragma once
//! M2L on the GPU by sibling groups (docs/design.md §16, "M2L on the GPU"). CUDA builds only.
//!
//! The boxes of a level that are the same child c of their parents (the same corner of their
//! parent) see the same 6^d - 3^d candidate offsets to their interaction list (189 in 3D, 27 in
//! 2D): every source is a child of a neighbour of the parent, and the relative offset R0 = target
//! - source lies in c - 3 .. c + 2 per axis. So a block takes the child c of 32 (or 64) consecutive
//! parents and walks those candidate offsets; on a full level every target has a source at every
//! offset, and every lane works. On an adaptive level only the children of split boxes are
//! targets, so the parents are its split boxes (DeviceLevel::split) when it lists them.
//!
//! For one offset, L_k += sum_n (-1)^|n| D_{n+k}(R0) M_n is a product of a fixed matrix with the
//! block's gathered moments. The matrix is precomputed per level as an *operator table*: the rows
//! k are taken four at a time (a row quad, four consecutive terms of nearly one degree), and for
//! each quad its columns n of degree <= p - |first k|, the four rows' entries side by side (sign
//! folded in, zero where |n| + |k| > p). A warp owns a few (quad, columns) units for the whole
//! kernel and keeps their accumulators in registers: per column it loads one moment per target and
//! the quad's four entries (a broadcast), then does 4 (or 8) multiply-adds. At the end the units'
//! sums meet in shared memory (a split quad adds from two warps) and each target's locals are added
//! to L once.
//!
//! Lanes hold one target each, or two where that keeps as many blocks on an SM (the occupancy
//! query decides; with two, each broadcast entry feeds two products, but the block's moments
//! double). Orders whose operator table does not fit beside the moments, or whose row quads
//! outnumber the warps' units (3D float p = 14..17, 3D double p = 12 and 13), run the kernel
//! once per *slice* of row quads: each launch copies only its rows' part of every offset's table
//! and adds its rows' locals into L (the moments are copied once per slice). Orders whose moments
//! leave no room for one row quad's entries (3D float p = 19 and 20, 3D double from p = 14), or
//! that would take more than m2l_plan::kMostSlices slices (3D float p = 18), use farfield::m2l
//! instead. Low orders run a thread per target (m2l_thread_gpu.h) where that
//! was measured faster (M2LOperators::reset); in float, the same sibling groups on the tensor cores
//! (m2l_tensor_gpu.h) where that was measured faster. NEARFIELD_M2L=direct|group1|group2|thread|tensor
//! forces a variant (comparisons; thread only up to kWideMaxOrder, tensor float only). At 3D float
//! p >= 11 (m2l_plan::packs_moments) the group kernel copies its sources' high-degree moments as
//! bfloat16 (packed_from: a level's moments packed by a small kernel before its launch);
//! NEARFIELD_M2L_MOMENTS=bf16 does so wherever its plan allows (float, balanced), =float nowhere
//! (comparisons).

#include <vector>

#include "core/gpu_runtime.h"
#include "farfield/lists_gpu.h"
#include "farfield/m2l_tensor_gpu.h"
#include "farfield/m2l_thread_gpu.h"
#include "farfield/offset_order.h"
#include "tree/levels_gpu.h"

namespace nf::farfield {

//! Refuses (UsageError) a wrong value of any far-field comparison variable: the passes'
//! (check_pass_variables), M2L's (NEARFIELD_M2L, _STAGED, _ROWS, _PROBE, _STAGES, _SPLITS, _GROUPS,
//! _PLAN, _LEVELS, _MOMENTS) and the orders per offset (NEARFIELD_M2L_ORDERS, _GRADE). The GPU full methods
//! call it first in their prepare, before any work.
void check_far_field_variables();

template <int D, class T>
class M2LOperators {
 public:
  //! Order p for the levels 2..leaf of t: each level's derivative table (derivative_tables, eps^2
  //! in that level's box units; kept here, the fallback reads it) and its operator table. Re-plans
  //! when p changes; storage grows, never shrinks.
  void prepare(int p, const DeviceLevels& t, double softening);
  //! L += the M2L of level `level` (parents: level l - 1; only the children of parents.split when
  //! set, unless NEARFIELD_M2L_GROUPS=all). The offsets' split among blocks on small levels is
  //! sized from parents.boxes (the split count stays on the device): on an adaptive level with few
  //! split parents it may split less than the rule of two blocks an SM asks.
  void apply(int l, const DeviceLevel& level, const DeviceLevel& parents, const DeviceList& list, const T* M, T* L);
  //! What apply takes for one level.
  struct Level {
    const DeviceLevel* level;
    const DeviceLevel* parents;
    const DeviceList* list;
    const T* M;
    T* L;
  };
  //! L(l) += the M2L of levels 2..K (`of(l)` gives level l's arguments), on the stream `s` (null:
  //! the default stream) as one stage. The levels are independent (level l reads its own moments
  //! and adds to its own locals), so they run on up to 8 streams of their own forked from `s` and
  //! joined back to it (gpu::StreamFork; level i of the launch order on stream i % 8, at the
  //! device's greatest priority when `high`, as the far stream's under NEARFIELD_OVERLAP=high): a
  //! coarse level's few blocks, whose launch would otherwise last a whole block's walk for a
  //! handful of targets, run beside the other levels' blocks. The finest level is launched first.
  //! Each level has scratch of its own (the thread kernel's, or the group kernel's packed moments),
  //! sized for every level before the
  //! fork (a reallocation frees, which waits for the whole device). NEARFIELD_M2L_LEVELS=serial
  //! runs them one after the other on `s`; `coarse` launches the coarsest level first (comparisons).
  template <class F>
  void apply_levels(int K, const gpu::Stream* s, bool high, F&& of) {
    const LevelOrder order = level_order();
    auto run = [&](int l) {
      const Level a = of(l);
      apply(l, *a.level, *a.parents, *a.list, a.M, a.L);
    };
    if (order == LevelOrder::serial || K <= 2) {
      for (int l = 2; l <= K; ++l) run(l);
      return;
    }
    for (int l = 2; l <= K; ++l) {
      const Level a = of(l);
      reserve(l, *a.level, *a.list);
    }
    levels_.run(s, K - 1, [&](int i) { run(order == LevelOrder::coarse_first ? 2 + i : K - i); }, high);
  }
  //! Whether the sibling-group kernel runs at this order (else the thread kernel or farfield::m2l).
  bool grouped() const { return !slices_.empty(); }
  //! Whether the thread-per-target kernel runs at this order.
  bool threaded() const { return threaded_; }
  //! Whether the tensor-core kernel runs at this order (float only: farfield/m2l_tensor_gpu.h).
  bool tensor() const { return tensor_.ready(); }

 private:
  // One launch of the group kernel: the row quads whose table entries are begin .. begin + size - 1
  // of each offset's table (all of them where the table fits), its warps' units, shape and memory.
  struct Slice {
    int begin = 0, size = 0, first_quad = 0, warps = 0, targets_per_lane = 1, stages = 1, rows = 4;
    std::size_t shared_bytes = 0;
    gpu::DeviceBuffer<int> plan;
  };
  // Calls f(kernel) with the group kernel instance of that many targets a lane, pipeline shape (1-3),
  // rows a unit (4, or 8 in float) and moments packed or not (float only).
  template <class F>
  static void dispatch(int targets_per_lane, int stages, int rows, bool packed, F&& f);
  // Plans order p for levels 0..leaf (the operator tables' storage).
  void reset(int p, int leaf);
  // Level l's scratch (grown, never shrunk): the thread kernel's, or the group kernel's packed
  // moments where it packs them; nothing at other kernels' orders.
  void reserve(int l, const DeviceLevel& level, const DeviceList& list);

  enum class LevelOrder { serial, fine_first, coarse_first };
  static LevelOrder level_order();  // NEARFIELD_M2L_LEVELS (read on every call; checked)
  gpu::StreamFork levels_{8};        // apply_levels' streams
  OffsetOrders orders_{};  // the order per offset length (farfield/offset_order.h)
  bool threaded_ = false;  // the thread-per-target kernel (m2l_thread_gpu.h)
  Staging staged_ = Staging::by_fill;  // its moments staged by the warp (NEARFIELD_M2L_STAGED)
  int p_ = -1, terms_ = 0, table_size_ = 0;
  // The group kernel's copies of the moments: the terms from packed_from_ as bfloat16 pairs,
  // words_ words a source (packed_from_ = words_ = terms_: as they are; m2l_group_plan.h).
  int packed_from_ = 0, words_ = 0;
  std::vector<Slice> slices_;          // the group kernel's launches (none: another kernel runs)
  gpu::DeviceBuffer<int> map_;         // operator entry -> signed derivative index
  gpu::DeviceBuffer<unsigned char> degree_, chunk_order_;  // operator entry's |n| + |k|; a column's lowest order
  gpu::DeviceBuffer<T> ops_;           // per level: kOffsets<D> tables of table_size_ entries
  gpu::DeviceBuffer<T> tables_;        // per level: kOffsets<D> derivative tables of terms_ entries
  // Per level: the thread kernel's padded rows (m2l_thread_scratch) and its lists grouped by order
  // (m2l_thread_class_words).
  std::vector<gpu::DeviceBuffer<T>> thread_scratch_;
  std::vector<gpu::DeviceBuffer<std::uint32_t>> thread_classes_;
  std::vector<gpu::DeviceBuffer<T>> packed_;  // per level: the group kernel's packed moments (float)
  std::vector<const T*> derivatives_;  // per level (the fallback's input)
  M2LTensor<D> tensor_;                // planned where the tensor-core kernel runs (float)
};

}  // namespace nf::farfield
