#pragma once
//! Particle and acceleration records shared by every CPU and GPU kernel.
//!
//! A body is packed as four scalars (x, y, z, m), 16 bytes in float32, so a GPU thread reads it
//! with one vector load, as in GPU Gems 3 ch. 31. 2D runs keep z = 0 and never read it in the
//! arithmetic (the interaction is templated on the dimension), so 2D and 3D share one layout.

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

}  // namespace nf
