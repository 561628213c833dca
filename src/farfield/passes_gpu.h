#pragma once
//! The far field's passes on the GPU (docs/design.md §16): the operators of farfield/expansion.h
//! over DeviceLevels, every expansion in units of its box's side (expansion.h: "Units"), every
//! pass adding into its output. Coefficients of level l are terms<D>(p) per box, box-major, from
//! the level's own pointer. Enqueued on the default stream. CUDA builds only.
//!
//! - p2m: on levels of at most 96 particles a box on average, a thread per box of at most 96 (its
//!   moments in registers, the order a template argument; 3D float up to p = 6, 2D float 11, 3D
//!   double 4, 2D double 7), then a block per larger box from a queue; else a block per box: each
//!   warp puts 32 particles' rows of x factors and (y, z) column products in shared memory, and
//!   each lane sums its tiles of 4 x exponents by 4 columns over them (farfield/p2m_tiles.cuh).
//! - Shifts (m2m / l2l): on levels of at least as many children as the GPU's resident threads, up
//!   to kThreadBoxMaxOrder, a thread per child (farfield/shifts_thread.cuh: the shift one axis at
//!   a time in registers). Otherwise, in 3D from p = 10 (p = 8 and 9 on levels of fewer than 6 children
//!   a parent), a block per 32 consecutive children (fewer at high orders), each lane shifting one
//!   line of terms along one axis of one child at a time in its registers
//!   (farfield/shifts_line.cuh, farfield/shift_lines.h). Else (and forced by NEARFIELD_SHIFTS=block)
//!   one block per parent box: a child sits +-1/4 of its parent's side from it per axis, so the
//!   shift's factors differ between children only by signs that depend on the parities of the
//!   shift's multi-index; the children are combined first under each parity's signs (a
//!   Walsh-Hadamard transform over the 2^D children), and a parent costs one shift's multiply-adds
//!   per parity class, C(p+2D, 2D) in all, instead of 2^D shifts. The sums' products come from
//!   per-order tables dealt evenly to the block's lanes (farfield/shift_tables.h).
//! - m2l: the older kernel, for orders whose moments leave no room in shared memory for a slice of
//!   the sibling-group tables (m2l_gpu.h: 3D float p = 19, 20, double from p = 14) or that would
//!   take more than m2l_plan::kMostSlices slices (3D float p = 18): one
//!   block per 32 (16, 8, 4 for large expansions) target boxes, one lane per target box;
//!   for each of the 7^D offsets between boxes of a level, the derivative tensor of that offset
//!   (precomputed per level: derivative_tables) and the moments of each target's source at that
//!   offset go to shared memory, and each warp takes a share of the coefficients k, every lane
//!   summing the same k for its own target (no divergence, the derivatives read as broadcasts),
//!   4 k at a time: k consecutive in memory have consecutive D_{n+k}, so a window of 4
//!   derivatives slides along each run of n (2 shared loads per 4 multiply-adds, not 2 per 1).
//! - l2p: one thread per particle, the order a template argument (farfield/l2p_fixed.cuh).

#include <cstdint>
#include <string>
#include <vector>

#include "core/body.h"
#include "core/gpu_runtime.h"
#include "farfield/lists_gpu.h"
#include "farfield/multi_index.h"
#include "farfield/offset_order.h"
#include "farfield/shift_tables.h"
#include "tree/levels_gpu.h"

namespace nf::farfield {

//! Where level `leaf`'s boxes are in space (for the particle passes).
struct LeafGeometry {
  double origin[3] = {0, 0, 0};
  double side = 1;      //!< of one leaf box
  double inv_side = 1;  //!< 1 / side: the kernels multiply by it (a float64 division is some 20 instructions)

  static LeafGeometry of(const double (&origin)[3], double side) {
    LeafGeometry g;
    for (int a = 0; a < 3; ++a) g.origin[a] = origin[a];
    g.side = side, g.inv_side = 1.0 / side;
    return g;
  }
};

//! Offsets between two boxes of one level that M2L can see: -3..3 per axis.
template <int D>
constexpr int kOffsets = D == 2 ? 49 : 343;

//! The derivative tables of consecutive levels, one launch for all: level i's table (eps2[i] =
//! eps^2 / h^2 in its box units) at tables + i * kOffsets<D> * terms<D>(p), its entry
//! [o * terms + n] = D_n(R0) for each offset o = sum_a (R0_a + 3) 7^a (zeros for the adjacent
//! offsets, which M2L never takes).
template <int D, class T>
void derivative_tables(int p, const std::vector<T>& eps2, T* tables);

//! The highest order of the passes' thread-per-box kernels (P2M's small boxes, the shifts' thread
//! per child): a box's coefficients in one thread's registers, up to 336 bytes an array (3D float
//! p = 6, 2D float 11, 3D double 4, 2D double 7).
template <int D, class T>
constexpr int thread_box_max_order() {
  int p = 0;
  while (terms<D>(p + 1) * int(sizeof(T)) <= 336) ++p;
  return p;
}
template <int D, class T>
constexpr int kThreadBoxMaxOrder = thread_box_max_order<D, T>();
static_assert(kThreadBoxMaxOrder<3, float> == 6 && kThreadBoxMaxOrder<2, float> == 11 &&
              kThreadBoxMaxOrder<3, double> == 4 && kThreadBoxMaxOrder<2, double> == 7);

//! Refuses (UsageError) a value of the passes' comparison variables other than these, before any
//! work: NEARFIELD_SHIFTS=thread|line|block, NEARFIELD_P2M_SMALL=off|on, NEARFIELD_P2M_SMALL_MAX=a
//! positive count (a typo had run the defaults under the variant's name). check_far_field_variables
//! (m2l_gpu.h) and Shifts::reset call it.
void check_pass_variables();

//! NEARFIELD_SHIFTS: "thread", "line" or "block" forces M2M and L2L's kernel; "" by order (checked).
std::string forced_shifts();

//! M = the moments of `leaf`'s boxes (not the adaptive tree's expanded ones, whose M is left as it
//! is): each box's terms are written, not added to. `particles`: the
//! level's particle count, which picks the thread per small box where the boxes hold at most 96
//! on average; `workspace` then holds the list of the larger boxes (4 bytes a box). Null
//! (or no count): a block per box.
template <int D, class T>
void p2m(const Body<T>* sorted, const DeviceLevel& leaf, const LeafGeometry& g, int p, T* M,
         std::uint64_t particles, gpu::Workspace* workspace);

//! An offset R translates at order orders.at(R) <= p (farfield/offset_order.h).
template <int D, class T>
void m2l(const DeviceLevel& level, const DeviceList& list, int p, const OffsetOrders& orders, const T* table, const T* M,
         T* L);

//! One product of a shift's sums: acc[io >> 16] += coef * x[io & 0xffff].
template <class T>
struct alignas(2 * sizeof(T)) ShiftEntry {  // one 8-byte (float) or 16-byte (double) load
  std::uint32_t io;
  T coef;
};

//! A ShiftLayout (farfield/shift_tables.h) as the kernels read it.
template <class T>
struct ShiftTableView {
  const int* first;  //!< per warp: row 0, lane 0
  const int* rows;   //!< per warp
  const ShiftEntry<T>* entries;
  int warps, outputs;
};

//! A ShiftLayout on the device, in precision T.
template <class T>
class ShiftTable {
 public:
  //! Uploads a layout (farfield/shift_tables.h) in precision T.
  void upload(const ShiftLayout& layout);
  ShiftTableView<T> view() const { return {first_.data(), rows_.data(), entries_.data(), warps_, outputs_}; }
  int threads() const { return 32 * warps_; }
  int outputs() const { return outputs_; }

 private:
  int warps_ = 0, outputs_ = 0;
  gpu::DeviceBuffer<int> first_, rows_;
  gpu::DeviceBuffer<ShiftEntry<T>> entries_;
};

//! M2M and L2L between the levels of a tree at order p (tables built once per order).
template <int D, class T>
class Shifts {
 public:
  //! Sets the order p; builds its tables where a table kernel may run (nothing when p is unchanged).
  void reset(int p);
  //! Children at level l + 1 (`fine`) into their parents at level l (`coarse`).
  void m2m(const DeviceLevel& fine, const DeviceLevel& coarse, const T* M_fine, T* M_coarse) const;
  //! Parents at level l (`coarse`) into their children at level l + 1 (`fine`).
  void l2l(const DeviceLevel& coarse, const DeviceLevel& fine, const T* L_coarse, T* L_fine) const;

 private:
  //! The tables of order p_, built at the first call that needs them (they are the table
  //! kernel's only: 3D from kLineMinOrder on runs lines on every level unless NEARFIELD_SHIFTS=block).
  void tables() const;

  int p_ = -1, terms_ = 0;
  mutable int tables_p_ = -1;  // the order up_ and down_ hold
  mutable ShiftTable<T> up_, down_;  // M2M: one list a parent term; L2L: one list a (child term, parity)
};

//! acc[i] += the far-field acceleration of sorted particle i (n particles; particle_box: its leaf box).
template <int D, class T>
void l2p(const Body<T>* sorted, const std::uint32_t* particle_box, std::uint32_t n, const DeviceLevel& leaf,
         const LeafGeometry& g, int p, const T* L, Acc4<T>* acc);

}  // namespace nf::farfield
