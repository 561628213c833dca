// The GPU plans' 32-bit work lists (nearfield/plan/work_list.cuh, gpu suite): a plan of more items
// than they take (2^31 - 1: the class sort's count is an int) is refused with a message naming the
// count, where its sum had wrapped around before; a plan that fits still builds. The trees are made up (one giant box, no
// particles behind it): the refusal comes when the counts are read, before anything reads a body.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "helpers.h"
#include "nearfield/nearfield_gpu.h"

#if defined(NF_HAVE_CUDA)  // the kernels exist in CUDA builds only (no CPU-build stubs)

namespace nf {
extern const GpuNearFieldKernels n3_rotate_kernels;  // nearfield/n3_rotate.cu
extern const GpuNearFieldKernels bpb_lb_kernels;     // nearfield/bpb_lb.cu
}  // namespace nf

using namespace nf;

namespace {

// A compact tree of one box of `count` particles and no neighbors, as a kernel's plan sees it.
struct OneBox {
  gpu::DeviceBuffer<std::uint64_t> key{std::vector<std::uint64_t>{0}};
  gpu::DeviceBuffer<std::uint32_t> first, offset{std::vector<std::uint32_t>{0, 0}}, ids{std::vector<std::uint32_t>{0}};
  NearFieldView<float> view;
  explicit OneBox(std::uint32_t count) : first(std::vector<std::uint32_t>{0, count}) {
    view.box_key = key.data();
    view.box_first = first.data();
    view.near_offset = view.near_full_offset = offset.data();
    view.near_ids = view.near_full_ids = ids.data();
    view.nonempty_count = view.computed_boxes = 1;
    view.n = view.max_box_count = count;
  }
};

// What plan() says: "" when it built, else the exception's message.
std::string plan_outcome(const GpuNearFieldKernels& kernels, std::uint32_t count) {
  OneBox box(count);
  auto kernel = kernels.get<3, float>()();
  try {
    kernel->plan(box.view);
  } catch (const std::length_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a plan of more work items than 32 bits index is refused, not wrapped" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  // n3-rotate cuts a box into chunks of 512 targets and plans each pair of chunks once:
  // c (c + 1) / 2 items for c chunks. 50M particles: 97657 chunks, 4.77e9 items (2^32 = 4.29e9).
  SUBCASE("n3-rotate, one box of 50M particles") {
    const std::string why = plan_outcome(n3_rotate_kernels, 50000000u);
    CHECK(why.find("4768493653 work items") != std::string::npos);
    CHECK(why.find("32-bit") != std::string::npos);
  }
  // 40M particles: 78125 chunks, 3.05e9 items: below 2^32 but above the sort's 2^31 - 1 (their
  // count c (c + 1) had also wrapped around in the items' decoding, computed in 32 bits).
  SUBCASE("n3-rotate, one box of 40M particles") {
    CHECK(plan_outcome(n3_rotate_kernels, 40000000u).find("3051796875 work items") != std::string::npos);
  }
  SUBCASE("n3-rotate, one box of 1M particles still plans") {
    CHECK(plan_outcome(n3_rotate_kernels, 1000000u) == "");
  }
  // bpb-lb: chunks of 512 targets times segments of 16384 sources: 4e9 particles in one box make
  // 7812500 x 244141 = 1.9e12 items.
  SUBCASE("bpb-lb, one box of 4e9 particles") {
    const std::string why = plan_outcome(bpb_lb_kernels, 4000000000u);
    CHECK(why.find("1907351562500 work items") != std::string::npos);
  }
}

#endif  // NF_HAVE_CUDA
