// doctest main shared by every test executable. The GPU executable runs only the "gpu" suite;
// without a device it exits with CTest's skip code 77 and says why, unless
// NEARFIELD_REQUIRE_GPU=1 demands a device, in which case the missing device is a failure.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>
#include <exception>
#include <iostream>

#include "core/gpu_runtime.h"

int main(int argc, char** argv) {
  bool gpu_suite = false;
  for (int i = 1; i < argc; ++i) gpu_suite = gpu_suite || std::strcmp(argv[i], "--test-suite=gpu") == 0;
  bool required = false;
  try {  // checked in every executable, with a GPU or without
    required = nf::gpu::required_by_environment();
  } catch (const std::exception& e) {  // a value other than 0 or 1
    std::cerr << "FAILED: " << e.what() << "\n";
    return 1;
  }
  if (gpu_suite && !nf::gpu::available()) {
    if (required) {
      std::cerr << "FAILED: NEARFIELD_REQUIRE_GPU=1 but " << nf::gpu::unavailable_reason() << "\n";
      return 1;
    }
    std::cout << "SKIPPED: GPU tests need a CUDA device: " << nf::gpu::unavailable_reason() << "\n";
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
