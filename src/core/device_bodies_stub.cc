// CPU-only build: the device conversions refuse with the reason (tests then skip visibly).
#include "core/device_bodies.h"

namespace nf {

template <class T>
void gather_bodies(const DeviceParticles&, const std::uint32_t*, std::size_t, Body<T>*) {
  gpu::require("gathering bodies on the GPU");
}
template <class T>
void gather_strided_bodies(const DeviceParticles&, std::size_t, std::size_t, std::size_t, double, Body<T>*) {
  gpu::require("gathering bodies on the GPU");
}
template <class T>
void scatter_accelerations(const Acc4<T>*, const std::uint32_t*, DeviceVectors&) {
  gpu::require("scattering accelerations on the GPU");
}

#define NF_DEVICE_BODIES(T)                                                                                     \
  template void gather_bodies<T>(const DeviceParticles&, const std::uint32_t*, std::size_t, Body<T>*);         \
  template void gather_strided_bodies<T>(const DeviceParticles&, std::size_t, std::size_t, std::size_t, double, \
                                         Body<T>*);                                                            \
  template void scatter_accelerations<T>(const Acc4<T>*, const std::uint32_t*, DeviceVectors&);
NF_DEVICE_BODIES(float)
NF_DEVICE_BODIES(double)
#undef NF_DEVICE_BODIES

}  // namespace nf
