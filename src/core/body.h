#pragma once
//! Particle and acceleration records shared by every CPU and GPU kernel.
//!
//! A body is packed as four scalars (x, y, z, m), 16 bytes in float32, so a GPU thread reads it
//! with one vector load, as in GPU Gems 3 ch. 31. 2D runs keep z = 0 and never read it in the
//! arithmetic (the interaction is templated on the dimension), so 2D and 3D share one layout.

#include "core/hd.h"

namespace nf {

//! Position and mass of one particle, in the scalar type the kernel computes with.
template <class T>
struct alignas(4 * sizeof(T)) Body {
  T x, y, z, m;
};

//! One acceleration (x, y, z; z = 0 in 2D), padded to the body's size so stores are vector stores.
template <class T>
struct alignas(4 * sizeof(T)) Acc4 {
  T x, y, z, pad;
};

//! *dst += a (x, y, z): how every kernel writes its result. The output contract: a kernel adds the
//! forces it computes into an array its caller zeroed, so several stages (near field, far field)
//! can add into one array (docs/design.md §3).
template <class T>
NF_HD NF_INLINE void add_into(Acc4<T>* dst, const Acc4<T>& a) {
  Acc4<T> d = *dst;
  d.x += a.x;
  d.y += a.y;
  d.z += a.z;
  *dst = d;
}

//! What a thread that owns its particle's output adds its sum to: zero without a load when the
//! caller says the output holds zeros (`zero`: it zeroed it and nothing ran since), else the
//! output itself. On small, latency-bound evaluations the load cost 2-5% (H100, 2D level 7,
//! P = 8..32). Kernels that accumulate in one register set from the start (bpb) begin from it;
//! those that sum in a helper (ppt, bpt, the thread path) store `zero ? sum : plus(out, sum)`,
//! which in the zero case is the same code as a plain store (loading the output early changed
//! the scheduling of bpt's loop: up to 15% either way on the H100).
template <class T>
NF_HD NF_INLINE Acc4<T> output_start(const Acc4<T>* out, bool zero) {
  return zero ? Acc4<T>{0, 0, 0, 0} : *out;
}

//! start + a (x, y, z): the value a thread that owns its particle's output stores there.
template <class T>
NF_HD NF_INLINE Acc4<T> plus(const Acc4<T>& start, const Acc4<T>& a) {
  return {start.x + a.x, start.y + a.y, start.z + a.z, start.pad};
}

}  // namespace nf
