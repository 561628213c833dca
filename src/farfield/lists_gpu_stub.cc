// CPU-only build: the GPU M2L lists refuse with the reason (tests then skip visibly).
#include "farfield/lists_gpu.h"

namespace nf::farfield {

std::uint64_t DeviceLists::links() const { return 0; }
void DeviceLists::build(const DeviceLevels&) { gpu::require("the GPU M2L lists"); }

}  // namespace nf::farfield
