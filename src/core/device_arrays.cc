#include "core/device_arrays.h"

namespace nf {

void upload_particles(const Particles& p, DeviceParticles& out) {
  gpu::require("uploading particles");
  if (out.n != p.size() || out.dim != p.dim) out = DeviceParticles(p.dim, p.size());
  out.bounds_valid = false;
  out.x.upload(p.x);
  out.y.upload(p.y);
  if (p.dim == 3) out.z.upload(p.z);
  out.m.upload(p.m);
}

DeviceParticles upload_particles(const Particles& p) {
  DeviceParticles d;
  upload_particles(p, d);
  return d;
}

}  // namespace nf
