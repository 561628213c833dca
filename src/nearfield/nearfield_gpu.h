#pragma once
//! GPU near-field kernels (drivers; one .cu file per kernel in this folder):
//! - ppt:    particle per thread, neighbors read straight from global memory;
//! - bpt:    box per thread;
//! - bpb:    box per block, the original BPB of Shan & Lei: the box, then each neighbor box,
//!           staged in shared memory, one thread per target particle;
//! - bpb-n3: the improved BPB (Newton's third law) exactly as the paper's steps 1-7.
//! All run over the sorted bodies, boxIdx and neighbor lists of a tree; boxes larger than a
//! block are processed in chunks; empty boxes are never launched.

#include <cstdint>
#include <memory>

#include "core/body.h"
#include "core/gpu_runtime.h"

namespace nf {

//! Raw device pointers and scalars of one near-field evaluation.
template <class T>
struct NearFieldView {
  const Body<T>* bodies = nullptr;           //!< sorted by box
  Acc4<T>* acc = nullptr;                    //!< output, sorted order
  // The compact layout (always): the nonempty_count = M non-empty boxes in key order.
  const std::uint64_t* box_key = nullptr;      //!< M Morton keys, ascending
  const std::uint32_t* box_first = nullptr;    //!< M + 1 offsets into the sorted bodies
  const std::uint32_t* near_offset = nullptr;  //!< M + 1: compact neighbor lists, full or half as
  const std::uint32_t* near_ids = nullptr;     //!<   the kernel's kNewton3 trait says
  const std::uint32_t* particle_slot = nullptr;  //!< n: each sorted body's compact box id
  const std::uint32_t* near_full_offset = nullptr;  //!< M + 1: the full compact lists, whatever the
  const std::uint32_t* near_full_ids = nullptr;     //!<   kernel's traits (one-sided paths need them)
  // The paper's dense layout (kernels with kDenseTree only; null otherwise).
  const std::uint32_t* box_start = nullptr;  //!< boxIdx, nbox + 1
  const std::uint32_t* particle_box = nullptr;
  const std::uint32_t* nonempty = nullptr;  //!< dense ids of the non-empty boxes, ascending
  std::uint32_t nonempty_count = 0;  //!< boxes to compute (a multi-GPU part: its own range, the first ones)
  std::uint32_t tree_boxes = 0;      //!< non-empty boxes of the tree (halo boxes included)
  const std::uint32_t* neighbor_offset = nullptr;  //!< dense lists: full (ppt, bpt, bpb) or half (bpb-n3)
  const std::uint32_t* neighbor_ids = nullptr;
  std::uint32_t n = 0;
  std::uint32_t max_box_count = 0;
  T eps2 = 0;
  bool guarded = true;
  unsigned long long* counter = nullptr;  //!< non-null: counting mode, interactions evaluated are added here
  gpu::Workspace* workspace = nullptr;    //!< scratch memory (host object: for the driver, not the kernel)
};

template <int D, class T>
void launch_ppt(const NearFieldView<T>& v);
template <int D, class T>
void launch_bpt(const NearFieldView<T>& v);
template <int D, class T>
void launch_bpb(const NearFieldView<T>& v);
//! acc must be zero beforehand: every contribution is an atomic add.
template <int D, class T>
void launch_bpb_n3(const NearFieldView<T>& v);

//! A GPU near-field kernel with a plan: `plan` runs once per tree (its work lists derive from the
//! tree, like the neighbor lists, and its time is reported with the tree build), `launch` once
//! per force evaluation.
template <class T>
class GpuNearFieldKernel {
 public:
  virtual ~GpuNearFieldKernel() = default;
  virtual void plan(const NearFieldView<T>& v) = 0;
  virtual void launch(const NearFieldView<T>& v) = 0;
};

//! Newton-3 warp kernels over the half near field cut into bounded work items (pair_items.cuh):
//! one warp per item, R targets per lane in registers, each pair once.
//! - n3-shfl:   the reaction on a source is summed in registers over the lane's targets and
//!              reduced across the warp with shuffles (register j-accumulation); atomics out.
//! - n3-rotate: each lane owns one source's reaction accumulator and passes it to the next lane
//!              after every step (lane rotation), so no two lanes ever touch one source; atomics out.
//! acc must be zero beforehand (kAtomics).
template <int D, class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_n3_shfl();
template <int D, class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_n3_rotate();
//! n3-colour: lane rotation over whole box pairs, scheduled in colours so that no two warps of a
//! launch write one box: plain loads and stores, no atomics, bitwise repeatable.
template <int D, class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_n3_colour();
//! bpb-lb: bpb's one-sided arithmetic over work items of bounded size (a chunk of a box's
//! targets against a segment of its sources), in block-size classes: load-balanced on clustered
//! input, bpb's own mapping on uniform input; split boxes summed in a fixed order (deterministic).
template <int D, class T>
std::unique_ptr<GpuNearFieldKernel<T>> make_bpb_lb();

}  // namespace nf
