// CPU-only build: the GPU tree with levels refuses with the reason (tests then skip visibly).
#include "tree/levels_gpu.h"

namespace nf {

void DeviceLevels::build(const DeviceTree&) { gpu::require("the GPU tree with levels"); }

}  // namespace nf
