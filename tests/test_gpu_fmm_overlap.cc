// The far field on a stream of its own beside the near field (gpu suite; methods/far_stream.h,
// docs/design.md §16 "Near and far field at once"): the stream's waits, and fmm and fmm-adaptive
// with it against their CPU twins.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "fmm_pair.h"
#include "helpers.h"
#include "methods/far_stream.h"
#include "methods/registry.h"

using namespace nf;

// The far field's own stream (methods/far_stream.h): begin() makes it wait for the default
// stream's work so far, and join() (here the guard's) the default stream for it. Each wait is
// missing-proof: the default stream's fill comes after a longer delay than the far stream's copy
// (without begin the copy reads zeros), and the far stream's copy after a delay the host's read
// would not wait for (without join it reads zeros). Off, both run on the default stream.
TEST_CASE("GPU far stream and default stream wait for each other" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  test::EnvScope overlap("NEARFIELD_OVERLAP");
  for (const char* mode : {"on", "high", "off"}) {
    const std::string setting = mode;
    CAPTURE(setting);
    overlap.set(mode);
    FarStream far;
    CHECK((far.stream() == nullptr) == (std::string(mode) == "off"));
    const std::size_t n = std::size_t(1) << 20, bytes = n * sizeof(std::uint32_t);
    gpu::DeviceBuffer<std::uint32_t> a(n), b(n);
    gpu::fill_bytes(a.data(), 0, bytes);
    gpu::fill_bytes(b.data(), 0, bytes);
    gpu::delay(60);
    gpu::fill_bytes(a.data(), 1, bytes);
    {
      FarStream::Guard guard(far);
      far.begin();
      const gpu::StreamScope scope(far.stream());
      gpu::delay(30);
      gpu::copy_on_device(b.data(), a.data(), bytes);
    }
    std::vector<std::uint32_t> h(n);
    gpu::copy_to_host(h.data(), b.data(), bytes);
    CHECK(std::size_t(std::count(h.begin(), h.end(), 0x01010101u)) == n);
  }
}

// fmm and fmm-adaptive match their CPU twins with the far field beside the near field
// (NEARFIELD_OVERLAP=on), its stream at high priority and without it (the default), over
// evaluations in a row without a prepare between, at orders whose M2L runs a thread per target
// (3), the sibling groups (8) and their pipeline shape 3 (12, 3D float), on a small 2D far field
// too; and fmm at p = 12 with the shifts' tables built at the first evaluation
// (NEARFIELD_SHIFTS=block after the prepare: their upload, inside the far stream's scope).
TEST_CASE("GPU fmm and fmm-adaptive run the far field beside the near field" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const Particles plummer = test::make("plummer", 3, 20000, 75), small = test::make("uniform", 2, 500, 76);
  test::EnvScope overlap("NEARFIELD_OVERLAP"), shifts("NEARFIELD_SHIFTS");
  for (const char* kernel : {"fmm", "fmm-adaptive"})
    for (Precision prec : {Precision::f32, Precision::f64})
      for (const Particles* p : {&plummer, &small})
        for (int order : {3, 8, 12})
          for (bool block : {false, true}) {
            const bool adaptive = std::string(kernel) == "fmm-adaptive";
            if (block && (adaptive || order != 12)) continue;
            const std::string method = kernel;
            CAPTURE(method);
            CAPTURE(to_string(prec));
            CAPTURE(p->size());
            CAPTURE(order);
            CAPTURE(block);
            MethodSetup s;
            s.level = p == &plummer ? 5 : 2;
            s.domain = default_domain(*p);
            s.softening = 1e-3;
            s.precision = prec;
            s.order = order;
            if (adaptive) s.leaf_size = 32;
            MethodSetup cs = s;
            if (!adaptive) cs.near = "cpu-omp";  // the scalar sums (fmm_pair.h)
            auto cpu = make_method(find_kernel(std::string("cpu-") + kernel), cs, *p);
            cpu->prepare(*p);
            cpu->evaluate();
            const std::vector<double> b = cpu->accelerations();
            for (const char* mode : {"on", "high", "off"}) {
              const std::string setting = mode;
              CAPTURE(setting);
              overlap.set(mode);
              shifts.set(nullptr);
              auto gpu = make_method(find_kernel(kernel), s, *p);
              gpu->prepare(*p);
              if (block) shifts.set("block");
              for (int round = 0; round < 3; ++round) {
                CAPTURE(round);
                gpu->poison_output();
                gpu->evaluate();
                CHECK(test::relative_l2(gpu->accelerations(), b) <= (prec == Precision::f32 ? 2e-6 : 1e-13));
              }
            }
          }
  overlap.set("sometimes");
  shifts.set(nullptr);
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(small);
  s.order = 4;
  for (const char* kernel : {"fmm", "fmm-adaptive"})
    CHECK_THROWS_WITH_AS(make_method(find_kernel(kernel), s, small), doctest::Contains("NEARFIELD_OVERLAP=sometimes"),
                         UsageError);
}
