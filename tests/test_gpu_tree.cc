// The GPU tree builder equals the CPU builder, element for element, in both layouts and at deep
// levels, and without its neighbor lists the same boxes; its stage timings add up under a total that
// has its own events (GPU suite).
#include <chrono>
#include <random>

#include "tree/box_rule.h"
#include "tree/domain.h"
#include "extreme_inputs.h"
#include "helpers.h"
#include "tree/tree.h"
#include "core/device_bodies.h"
#include "tree/tree_gpu.h"
#include "tree_checks.h"
#include "methods/reorder_gpu.h"
#include "sim/integrate_gpu.h"

using namespace nf;

namespace {

// The sort and the boxes of a GPU build (downloaded as `gpu`, on the device `t`) equal the CPU tree's.
void check_same_boxes(const Tree& gpu, const DeviceTree& t, const Tree& cpu) {
  CHECK(gpu.domain.side == cpu.domain.side);
  for (int a = 0; a < cpu.dim; ++a) CHECK(gpu.domain.origin[a] == cpu.domain.origin[a]);
  CHECK(gpu.nbox == cpu.nbox);
  CHECK(gpu.order == cpu.order);
  CHECK(gpu.box_key == cpu.box_key);
  CHECK(gpu.box_first == cpu.box_first);
  CHECK(gpu.particle_compact_box == cpu.particle_compact_box);
  CHECK(t.nonempty_count == cpu.nonempty_boxes());
  CHECK(t.max_box_count == cpu.max_box_count());
}

void check_same_tree(const Particles& p, int level, const std::string& domain_text, bool dense) {
  CAPTURE(p.size());
  CAPTURE(p.dim);
  CAPTURE(level);
  CAPTURE(domain_text);
  CAPTURE(dense);
  const Domain d = resolve_domain(p, domain_text, "test");
  const Tree cpu = build_tree(p, level, d, dense);
  const DeviceParticles dp = upload_particles(p);
  GpuTreeBuilder builder(p.dim, level, p.size(), dense);
  // Without an explicit domain the GPU reduces it itself; it must find the same one. The second
  // build reuses every buffer and must give the same tree again.
  for (int rebuild = 0; rebuild < 2; ++rebuild) builder.build(dp, domain_text.empty() ? nullptr : &d);
  const Tree gpu = download_tree(builder.tree());
  check_same_boxes(gpu, builder.tree(), cpu);
  CHECK(gpu.near_full.offset == cpu.near_full.offset);
  CHECK(gpu.near_full.ids == cpu.near_full.ids);
  CHECK(gpu.near_half.offset == cpu.near_half.offset);
  CHECK(gpu.near_half.ids == cpu.near_half.ids);
  CHECK(gpu.dense == dense);
  CHECK(gpu.box_start == cpu.box_start);
  CHECK(gpu.particle_box == cpu.particle_box);
  CHECK(gpu.nonempty == cpu.nonempty);
  CHECK(gpu.full.offset == cpu.full.offset);
  CHECK(gpu.full.ids == cpu.full.ids);
  CHECK(gpu.half.offset == cpu.half.offset);
  CHECK(gpu.half.ids == cpu.half.ids);
  // The CPU tree is checked against the brute-force reference in the CPU tests; equality carries
  // it over. Small inputs are checked against the reference here too.
  if (p.size() <= 3000) test::check_compact(p, gpu, level, d);

  // A builder without neighbor lists (fmm-adaptive's): the same sort, boxes and largest box, twice,
  // and no lists.
  if (!dense) {
    GpuTreeBuilder bare(p.dim, level, p.size(), false, false);
    for (int rebuild = 0; rebuild < 2; ++rebuild) bare.build(dp, domain_text.empty() ? nullptr : &d);
    const Tree t = download_tree(bare.tree());
    CHECK(!bare.tree().lists);
    check_same_boxes(t, bare.tree(), cpu);
    CHECK(bare.tree().near_full_links == 0);
    CHECK(bare.tree().near_half_links == 0);
    CHECK(t.near_full.offset.empty());
    CHECK(t.near_full.ids.empty());
    CHECK(t.near_half.offset.empty());
    CHECK(t.near_half.ids.empty());
  }

  // The sorted bodies every near-field kernel reads.
  gpu::DeviceBuffer<Body<float>> bodies(builder.tree().n);
  gather_bodies<float>(dp, builder.tree().order.data(), builder.tree().n, bodies.data());
  const std::vector<Body<float>> b = bodies.download();
  REQUIRE(b.size() == p.size());
  std::size_t bad = 0;
  for (std::size_t s = 0; s < b.size(); ++s) {
    const std::uint32_t i = cpu.order[s];
    bad += b[s].x != static_cast<float>(p.x[i]) || b[s].y != static_cast<float>(p.y[i]);
    bad += b[s].m != static_cast<float>(p.m[i]);
    if (p.dim == 3) bad += b[s].z != static_cast<float>(p.z[i]);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("GPU tree builder equals the CPU builder on random inputs, both layouts" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (int dim : {2, 3})
    for (const char* dist : {"uniform", "plummer", "clusters"})
      for (std::int64_t n : {1, 2, 33, 1000, 65537})
        for (int level : {0, 1, 3, dim == 2 ? 7 : 5})
          for (bool dense : {false, true}) check_same_tree(test::make(dist, dim, n, 100 + n), level, "", dense);
  check_same_tree(test::make_exact(2, 7, 16), 7, "", true);
  check_same_tree(test::make_exact(3, 4, 9), 4, "", true);
  check_same_tree(test::make("uniform", 2, 300000, 5), 10, "", true);
  check_same_tree(test::make("clusters", 2, 1000, 5), 11, "", true);  // 4M boxes, mostly empty
  check_same_tree(test::make("clusters", 3, 1000, 5), 7, "", true);   // 2M boxes, mostly empty
}

TEST_CASE("GPU tree builder equals the CPU builder at deep levels (compact layout)" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (int dim : {2, 3})
    for (const char* dist : {"uniform", "plummer", "clusters"})
      for (int level : dim == 2 ? std::vector<int>{12, 16, 20, 24, 31} : std::vector<int>{8, 10, 12, 16, 21}) {
        check_same_tree(test::make(dist, dim, 100000, 7 + level), level, "", false);
        check_same_tree(test::make(dist, dim, 2000, 9 + level), level, "", false);
      }
}

TEST_CASE("GPU tree builder equals the CPU builder on adversarial inputs" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  check_same_tree(test::from_points(2, {}), 3, "", true);
  check_same_tree(test::from_points(2, {}), 31, "", false);
  check_same_tree(test::from_points(3, {{0.5, 0.5, 0.5}}), 2, "", true);
  check_same_tree(test::from_points(3, {{0.5, 0.5, 0.5}}), 21, "", false);
  check_same_tree(test::from_points(3, std::vector<std::vector<double>>(999, {-1.0, 2.0, 3.0})), 4, "", true);
  check_same_tree(test::from_points(3, std::vector<std::vector<double>>(999, {-1.0, 2.0, 3.0})), 21, "", false);
  std::vector<std::vector<double>> faces;
  for (int i = 0; i <= 16; ++i)
    for (int j = 0; j <= 16; ++j) faces.push_back({i / 16.0, j / 16.0});
  for (bool dense : {false, true}) {
    check_same_tree(test::from_points(2, faces), 4, "0,0,1", dense);
    check_same_tree(test::from_points(2, faces), 4, "", dense);
    check_same_tree(test::from_points(2, faces), 2, "-1,-1,2", dense);
  }
  check_same_tree(test::from_points(2, faces), 31, "0,0,1", false);
  // Negative coordinates and negative zero.
  check_same_tree(test::from_points(2, {{-0.0, 0.0}, {0.0, -0.0}, {-3.5, 2.0}, {1e-300, -1e-300}}), 3, "", true);
  std::vector<std::vector<double>> crowd;
  nf::Random r(8);
  for (int i = 0; i < 20000; ++i) crowd.push_back({0.5 + 1e-3 * r.uniform(), 0.5 + 1e-3 * r.uniform(), 0.5});
  crowd.push_back({0, 0, 0});
  crowd.push_back({1, 1, 1});
  check_same_tree(test::from_points(3, crowd), 5, "", true);
  check_same_tree(test::from_points(3, crowd), 18, "", false);
  for (const test::ExtremeInput& e : test::extreme_inputs()) {
    CAPTURE(e.name);
    check_same_tree(e.particles, e.level, "", false);
    if (e.dense_ok) check_same_tree(e.particles, e.level, "", true);
  }
}

TEST_CASE("GPU tree builder reused across inputs whose boxes and links grow (lists grown and filled again)" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  // One builder per (dim, level, N) as a simulation keeps it: a crowded input first (few boxes and
  // links), then spread ones (many more: the id buffers must grow and the lists be filled again),
  // then crowded again. Level 5 uses the map over all boxes; level 12 (2D) / 9 (3D) the search.
  for (int dim : {2, 3})
    for (int level : {5, dim == 2 ? 12 : 9}) {
      CAPTURE(dim);
      CAPTURE(level);
      const std::size_t n = 5000;
      GpuTreeBuilder builder(dim, level, n, false);
      for (const char* dist : {"core", "uniform", "clusters", "core"}) {
        CAPTURE(dist);
        const Particles p = test::make(dist, dim, n, 31);
        const Domain d = default_domain(p);
        const Tree cpu = build_tree(p, level, d, false);
        builder.build(upload_particles(p), nullptr);
        const Tree gpu = download_tree(builder.tree());
        CHECK(gpu.box_key == cpu.box_key);
        CHECK(gpu.box_first == cpu.box_first);
        CHECK(gpu.near_full.offset == cpu.near_full.offset);
        CHECK(gpu.near_full.ids == cpu.near_full.ids);
        CHECK(gpu.near_half.offset == cpu.near_half.offset);
        CHECK(gpu.near_half.ids == cpu.near_half.ids);
        CHECK(builder.tree().max_box_count == cpu.max_box_count());
      }
    }
}

#if defined(NF_HAVE_CUDA)  // the drift has no CPU-build stub: its callers are CUDA-only too
TEST_CASE("GPU drift reduces the bounds of the positions it writes, and the tree build takes its domain from them" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (int dim : {2, 3})
    for (const char* dist : {"uniform", "core", "clusters"}) {
      CAPTURE(dim);
      CAPTURE(dist);
      const std::size_t n = 4099;
      const Particles p = test::make(dist, dim, n, 57);
      DeviceParticles dp = upload_particles(p);
      CHECK_FALSE(dp.bounds_valid);
      // Velocities and accelerations that carry the particles well outside their first domain,
      // some to negative coordinates.
      std::mt19937_64 rng(dim * 10 + n);
      std::uniform_real_distribution<double> u(-3.0, 2.0);
      DeviceVectors v(dim, n), a(dim, n);
      for (DeviceVectors* w : {&v, &a})
        for (gpu::DeviceBuffer<double>* axis : {&w->x, &w->y, &w->z}) {
          std::vector<double> host(axis->size());
          for (double& e : host) e = u(rng);
          axis->upload(host);
        }
      sim_gpu::kick_drift(dp, v, sim_gpu::KickAcc{&a, nullptr, false}, 0.25, 0.5, 0.75);
      REQUIRE(dp.bounds_valid);
      Particles moved = p;
      dp.x.download().swap(moved.x);
      dp.y.download().swap(moved.y);
      if (dim == 3) dp.z.download().swap(moved.z);
      const Domain d = default_domain(moved);
      const int level = dim == 2 ? 6 : 4;
      const Tree cpu = build_tree(moved, level, d, false);
      GpuTreeBuilder builder(dim, level, n, false);
      builder.build(dp, nullptr);
      const Tree gpu = download_tree(builder.tree());
      CHECK(gpu.domain.side == d.side);
      for (int ax = 0; ax < dim; ++ax) CHECK(gpu.domain.origin[ax] == d.origin[ax]);
      CHECK(gpu.order == cpu.order);
      CHECK(gpu.box_key == cpu.box_key);
      CHECK(gpu.near_full.ids == cpu.near_full.ids);
      // Moving the state into the tree's order (a simulation's step) keeps the bounds with it.
      gpu::DeviceBuffer<std::uint32_t> index(n);
      reorder_gpu::StateSpare spare;
      gpu::DeviceBuffer<Body<float>> bodies(n);
      reorder_gpu::reorder_state<float>(builder.tree().order.data(), dp, v, index, spare, bodies.data());
      REQUIRE(dp.bounds_valid);
      CHECK_FALSE(spare.p.bounds_valid);
      builder.build(dp, nullptr);
      const Tree sorted = download_tree(builder.tree());
      CHECK(sorted.domain.side == d.side);
      for (int ax = 0; ax < dim; ++ax) CHECK(sorted.domain.origin[ax] == d.origin[ax]);
      CHECK(sorted.box_key == cpu.box_key);
      // New positions from the host clear the flag, and the build reduces them itself.
      upload_particles(moved, dp);
      CHECK_FALSE(dp.bounds_valid);
      builder.build(dp, nullptr);
      CHECK(download_tree(builder.tree()).domain.side == d.side);
    }
  // No particles: the drift's bounds give the same domain as the reduction (origin 0, side 1).
  for (int dim : {2, 3}) {
    DeviceParticles none(dim, 0);
    DeviceVectors v(dim, 0), a(dim, 0);
    sim_gpu::kick_drift(none, v, sim_gpu::KickAcc{&a, nullptr, false}, 0.0, 0.5, 0.5);
    GpuTreeBuilder builder(dim, 3, 0, false);
    builder.build(none, nullptr);
    CHECK(builder.tree().domain.side == 1.0);
    CHECK(builder.tree().domain.origin[0] == 0.0);
    CHECK(builder.tree().nonempty_count == 0);
  }
}
#endif

TEST_CASE("GPU tree build: stage times lie within a total timed by its own events, and within the wall clock" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (bool dense : {false, true}) {
    CAPTURE(dense);
    const Particles p = test::make_exact(2, 5, 8);
    const DeviceParticles dp = upload_particles(p);
    const Domain dom = default_domain(p);
    GpuTreeBuilder b(2, 5, p.size(), dense);
    for (int r = 0; r < 3; ++r) {
      GpuBuildTimes t;
      const auto t0 = std::chrono::steady_clock::now();
      b.build(dp, r == 2 ? nullptr : &dom, &t);
      const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const double stages = t.domain + t.keys + t.sort + t.box_starts + t.neighbors + t.dense;
      INFO("total " << t.total << " ms, stages " << stages << " ms, wall " << wall << " ms");
      for (double v : {t.domain, t.keys, t.sort, t.box_starts, t.neighbors, t.dense}) CHECK(v >= 0);
      CHECK(t.sort > 0);
      CHECK((t.dense > 0) == dense);  // untouched (0) when the dense stage does not run
      // The stages run one after another inside the total's events (event resolution ~0.5 us).
      CHECK(t.total >= stages - 0.002);
      // ...and the total's events lie inside the call.
      CHECK(t.total <= wall + 0.002);
    }
    const std::vector<double> sort = time_bare_sort(b.tree(), 1, 3);
    CHECK(sort.size() == 3);
    for (double ms : sort) CHECK(ms > 0);
    CHECK(b.tree().max_box_count == 8u);
    CHECK(b.tree().nonempty_count == 1024u);
  }
}
