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

namespace {

// The setup of a GPU full method in these tests (fmm-adaptive with leaves of at most 32), and the
// accelerations of its CPU twin (cpu-fmm with the scalar near-field sums, fmm_pair.h).
MethodSetup full_setup(const std::string& kernel, const Particles& p, int level, Precision prec, int order) {
  MethodSetup s;
  s.level = level;
  s.domain = default_domain(p);
  s.softening = 1e-3;
  s.precision = prec;
  s.order = order;
  if (kernel == "fmm-adaptive") s.leaf_size = 32;
  return s;
}

std::vector<double> cpu_twin(const std::string& kernel, const MethodSetup& s, const Particles& p) {
  MethodSetup cs = s;
  if (kernel != "fmm-adaptive") cs.near = "cpu-omp";
  auto cpu = make_method(find_kernel("cpu-" + kernel), cs, p);
  cpu->prepare(p);
  cpu->evaluate();
  return cpu->accelerations();
}

}  // namespace

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
            const MethodSetup s = full_setup(method, *p, p == &plummer ? 5 : 2, prec, order);
            const std::vector<double> b = cpu_twin(method, s, *p);
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

// gpu::StreamFork (core/gpu_runtime.h), which M2L's levels run on: run() forks every stream from
// the stream it is given, runs each item with its stream current (items beyond the streams' count
// share them), and joins them back, also when an item throws. Missing-proof: each round the
// source is zeroed and refilled after a delay the forked copies would not wait for without the
// fork (they would copy zeros), and the copies run after delays the host's read (on the default
// stream, which does not order with the non-blocking forked streams) would not wait for without
// the join. Forked from the default stream and from a non-blocking one, at both priorities.
TEST_CASE("GPU stream fork and join wait for each other" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const std::size_t n = std::size_t(1) << 20, bytes = n * sizeof(std::uint32_t);
  gpu::Stream side(false);
  const gpu::Stream* sides[] = {nullptr, &side};
  gpu::StreamFork fork(3);
  CHECK(fork.size() == 3);
  const int items = 7;  // more than the streams: items 0, 3, 6 share stream 0
  gpu::DeviceBuffer<std::uint32_t> a(n);
  std::vector<gpu::DeviceBuffer<std::uint32_t>> b;
  for (int i = 0; i < items; ++i) b.emplace_back(n);
  std::vector<std::uint32_t> h(n);
  for (const gpu::Stream* from : sides)
    for (bool high : {false, true})
      for (int round = 0; round < 2; ++round) {  // the streams are reused within a priority
        CAPTURE(from != nullptr);
        CAPTURE(high);
        CAPTURE(round);
        {
          const gpu::StreamScope scope(from);
          gpu::fill_bytes(a.data(), 0, bytes);
          for (auto& x : b) gpu::fill_bytes(x.data(), 0, bytes);
          gpu::delay(60);
          gpu::fill_bytes(a.data(), 1, bytes);
        }
        std::vector<int> ran;
        fork.run(from, items, [&](int i) {
          CHECK(gpu::current_stream() == fork.stream(i % fork.size())->handle());
          ran.push_back(i);
          gpu::delay(10);
          gpu::copy_on_device(b[std::size_t(i)].data(), a.data(), bytes);
        }, high);
        CHECK(ran == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
        CHECK(gpu::current_stream() == nullptr);  // the scope before run()
        if (from) {
          gpu::Event done;
          done.record(from);
          done.synchronize();
        }
        for (int i = 0; i < items; ++i) {
          CAPTURE(i);
          gpu::copy_to_host(h.data(), b[std::size_t(i)].data(), bytes);
          CHECK(std::size_t(std::count(h.begin(), h.end(), 0x01010101u)) == n);
        }
        gpu::synchronize();
      }
  // An item that throws: the items before it still join (the host's read after the error sees
  // their copies), and the error comes out.
  gpu::fill_bytes(a.data(), 0, bytes);
  for (auto& x : b) gpu::fill_bytes(x.data(), 0, bytes);
  gpu::delay(30);
  gpu::fill_bytes(a.data(), 1, bytes);
  CHECK_THROWS_WITH_AS(fork.run(nullptr, items, [&](int i) {
    if (i == 2) throw UsageError("item 2 refused");
    gpu::delay(10);
    gpu::copy_on_device(b[std::size_t(i)].data(), a.data(), bytes);
  }), doctest::Contains("item 2 refused"), UsageError);
  for (int i = 0; i < 2; ++i) {
    CAPTURE(i);
    gpu::copy_to_host(h.data(), b[std::size_t(i)].data(), bytes);
    CHECK(std::size_t(std::count(h.begin(), h.end(), 0x01010101u)) == n);
  }
}

// M2L's levels on streams of their own (M2LOperators::apply_levels, the default), finest or
// coarsest first, and one after the other (NEARFIELD_M2L_LEVELS=serial), with the far field beside
// the near field and without: fmm and fmm-adaptive match their CPU twins at orders whose M2L runs a
// thread per target (3: a scratch buffer each level), the sibling groups (10) and, in 3D float, the tensor cores
// (13), over evaluations in a row, 3D and 2D, float and double. fmm-adaptive runs its near field's
// items with the default segment and with segments of 32 sources (NEARFIELD_NEAR_SEGMENT: most
// leaves then take several items of atomics). Then the settings' refusals.
TEST_CASE("GPU fmm and fmm-adaptive run M2L's levels at once" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const Particles plummer = test::make("plummer", 3, 20000, 77), small = test::make("clusters", 2, 3000, 78);
  test::EnvScope levels("NEARFIELD_M2L_LEVELS"), overlap("NEARFIELD_OVERLAP"), segment("NEARFIELD_NEAR_SEGMENT");
  for (const char* kernel : {"fmm", "fmm-adaptive"})
    for (Precision prec : {Precision::f32, Precision::f64})
      for (const Particles* p : {&plummer, &small})
        for (int order : {3, 10, 13}) {
          const bool adaptive = std::string(kernel) == "fmm-adaptive";
          const std::string method = kernel;
          CAPTURE(method);
          CAPTURE(to_string(prec));
          CAPTURE(p->size());
          CAPTURE(order);
          const MethodSetup s = full_setup(method, *p, p == &plummer ? 5 : 6, prec, order);
          const std::vector<double> b = cpu_twin(method, s, *p);
          for (const char* mode : {"streams", "coarse", "serial"})
            for (const char* beside : {"off", "on"}) {
              const std::string setting = std::string(mode) + ", overlap " + beside;
              CAPTURE(setting);
              levels.set(mode);
              overlap.set(beside);
              for (const char* seg : {static_cast<const char*>(nullptr), "32"}) {
                if (seg && !adaptive) continue;
                const std::string items = seg ? seg : "default";
                CAPTURE(items);
                segment.set(seg);
                auto gpu = make_method(find_kernel(kernel), s, *p);
                gpu->prepare(*p);
                for (int round = 0; round < 2; ++round) {
                  CAPTURE(round);
                  gpu->poison_output();
                  gpu->evaluate();
                  CHECK(test::relative_l2(gpu->accelerations(), b) <= (prec == Precision::f32 ? 2e-6 : 1e-13));
                }
              }
            }
        }
  overlap.set(nullptr);
  segment.set(nullptr);
  MethodSetup s;
  s.level = 4;
  s.domain = default_domain(plummer);
  s.order = 10;
  for (const char* kernel : {"fmm", "fmm-adaptive"}) {
    s.leaf_size = std::string(kernel) == "fmm-adaptive" ? 32 : 0;
    levels.set("sometimes");
    auto gpu = make_method(find_kernel(kernel), s, plummer);
    CHECK_THROWS_WITH_AS(gpu->prepare(plummer), doctest::Contains("NEARFIELD_M2L_LEVELS=sometimes"), UsageError);
    levels.set(nullptr);
    gpu->prepare(plummer);
    gpu->evaluate();  // the method is usable after the refusal
  }
  for (const char* bad : {"16", "2000000", "many", "1024x"}) {
    CAPTURE(std::string(bad));
    segment.set(bad);
    s.leaf_size = 32;
    auto gpu = make_method(find_kernel("fmm-adaptive"), s, plummer);
    const std::string named = std::string("NEARFIELD_NEAR_SEGMENT=") + bad;
    CHECK_THROWS_WITH_AS(gpu->prepare(plummer), doctest::Contains(named.c_str()), UsageError);
  }
}
