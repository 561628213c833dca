// CPU-only build: the GPU builder refuses with the reason (tests then skip visibly).
#include "core/errors.h"
#include "tree/tree_gpu.h"

namespace nf {

namespace tree_gpu {
struct Scratch {};
}  // namespace tree_gpu

GpuTreeBuilder::GpuTreeBuilder(int, int, std::size_t, bool, bool) { gpu::require("the GPU tree builder"); }
GpuTreeBuilder::~GpuTreeBuilder() = default;
void GpuTreeBuilder::build(const DeviceParticles&, const Domain*, GpuBuildTimes*) { gpu::require("the GPU tree builder"); }
std::vector<double> time_bare_sort(const DeviceTree&, int, int) {
  gpu::require("the GPU tree builder");
  return {};
}
Tree download_tree(const DeviceTree&) {
  gpu::require("the GPU tree builder");
  return {};
}
}  // namespace nf
