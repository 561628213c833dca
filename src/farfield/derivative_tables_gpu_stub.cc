// CPU-only build: the GPU derivative tables refuse with the reason (tests then skip visibly).
#include <vector>

#include "core/gpu_runtime.h"

namespace nf::farfield {

template <int D, class T>
void derivative_tables(int, const std::vector<T>&, T*) {
  gpu::require("the GPU derivative tables");
}

template void derivative_tables<2, float>(int, const std::vector<float>&, float*);
template void derivative_tables<2, double>(int, const std::vector<double>&, double*);
template void derivative_tables<3, float>(int, const std::vector<float>&, float*);
template void derivative_tables<3, double>(int, const std::vector<double>&, double*);

}  // namespace nf::farfield
