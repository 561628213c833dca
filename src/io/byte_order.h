#pragma once
//! Byte order of binary particle files. Tipsy files come big-endian (XDR, the standard) or in the
//! writer's native little-endian order; nearfield's own .bin is always little-endian.

#include <cstdint>
#include <cstring>

namespace nf::io {

//! Order of the bytes of a multi-byte value in a file.
enum class ByteOrder { little, big };

//! The order of this machine.
constexpr ByteOrder host_byte_order() {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return ByteOrder::big;
#else
  return ByteOrder::little;
#endif
}

//! "big-endian" or "little-endian".
inline const char* to_string(ByteOrder o) { return o == ByteOrder::big ? "big-endian" : "little-endian"; }

//! Reverses the bytes of `n` values of `size` bytes each, in place.
inline void swap_bytes(void* data, std::size_t n, std::size_t size) {
  auto* b = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i, b += size)
    for (std::size_t lo = 0, hi = size - 1; lo < hi; ++lo, --hi) {
      const unsigned char t = b[lo];
      b[lo] = b[hi];
      b[hi] = t;
    }
}

//! The value of type T stored at `p` in byte order `o` (p need not be aligned).
template <class T>
T load(const unsigned char* p, ByteOrder o) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if (o != host_byte_order()) swap_bytes(&v, 1, sizeof v);
  return v;
}

//! Stores `v` at `p` in byte order `o`.
template <class T>
void store(unsigned char* p, T v, ByteOrder o) {
  if (o != host_byte_order()) swap_bytes(&v, 1, sizeof v);
  std::memcpy(p, &v, sizeof v);
}

}  // namespace nf::io
