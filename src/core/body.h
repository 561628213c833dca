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

//! prior + a (x, y, z): a thread that owns its particle's output loads it (prior) before its
//! work, so that the load's latency hides behind the work, and stores prior + its sum at the end.
template <class T>
NF_HD NF_INLINE Acc4<T> plus(const Acc4<T>& prior, const Acc4<T>& a) {
  return {prior.x + a.x, prior.y + a.y, prior.z + a.z, prior.pad};
}

}  // namespace nf
