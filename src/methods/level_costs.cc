#include "methods/level_costs.h"

#include <vector>

namespace nf {
namespace {

struct Fitted {
  const char* kernel;
  int dim;
  double pair_s, box_s, link_s;
};

// scripts/fit-level-costs.py build/bin/nearfield results (results/depth: 2D uniform, N = 2^20,
// levels 3..10; results/nonuniform: 3D Plummer and uniform, N = 2e6, levels 5..8; H100, float).
// Relative least squares, coefficients >= 0; worst relative error of each fit over its points in
// the comment. The dense-layout kernels count every box and link of the level.
constexpr Fitted kFitted[] = {
    {"bpb", 2, 6.008e-13, 9.216e-10, 0},            // 8 points, worst 57%
    {"bpb", 3, 1.111e-12, 2.136e-10, 0},            // 8 points, worst 86%
    {"bpb-lb", 2, 5.085e-13, 0, 1.377e-11},         // 8 points, worst 44%
    {"bpb-lb", 3, 6.288e-13, 5.536e-14, 9.045e-12}, // 8 points, worst 39%
    {"bpb-n3", 2, 1.709e-11, 5.577e-10, 0},         // 8 points, worst 79%
    {"n3-rotate", 2, 3.211e-13, 0, 1.634e-11},      // 8 points, worst 63%
    {"n3-rotate", 3, 4.213e-13, 3.84e-12, 1.006e-11},  // 8 points, worst 55%
    {"n3-shfl", 2, 3.903e-13, 0, 1.555e-11},        // 8 points, worst 60%
    {"n3-shfl", 3, 5.163e-13, 4.076e-12, 9.708e-12},   // 8 points, worst 48%
    {"ppt", 2, 6.148e-13, 0, 1.402e-11},            // 8 points, worst 28%
    {"ppt", 3, 7.191e-13, 2.543e-10, 0},            // 8 points, worst 57%
};

std::vector<KernelCostModel> make_models() {
  std::vector<KernelCostModel> out;
  for (const Fitted& f : kFitted) {
    KernelCostModel m;
    m.kernel = f.kernel;
    m.pair_s = f.pair_s;
    m.box_s = f.box_s;
    m.link_s = f.link_s;
    m.all_boxes = m.kernel == "bpb" || m.kernel == "bpb-n3";
    out.push_back(m);
  }
  return out;
}

}  // namespace

const KernelCostModel* kernel_cost_model(const std::string& kernel, int dim) {
  static const std::vector<KernelCostModel> models = make_models();
  for (std::size_t i = 0; i < models.size(); ++i)
    if (models[i].kernel == kernel && kFitted[i].dim == dim) return &models[i];
  return nullptr;
}

}  // namespace nf
