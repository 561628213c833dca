// The GPU tree builder equals the CPU builder, element for element (GPU suite).
#include "common/domain.h"
#include "helpers.h"
#include "quadtree/tree.h"
#include "quadtree/tree_gpu.h"
#include "tree_checks.h"

using namespace nf;

namespace {

void check_same_tree(const Particles& p, int level, const std::string& domain_text) {
  CAPTURE(p.size());
  CAPTURE(p.dim);
  CAPTURE(level);
  CAPTURE(domain_text);
  const Domain d = resolve_domain(p, domain_text, "test");
  const Tree cpu = build_tree(p, level, d);
  const DeviceParticles dp = upload_particles(p);
  GpuTreeBuilder builder(p.dim, level, p.size());
  // Without an explicit domain the GPU reduces it itself; it must find the same one.
  for (int rebuild = 0; rebuild < 2; ++rebuild) builder.build(dp, domain_text.empty() ? nullptr : &d);
  const Tree gpu = download_tree(builder.tree());
  CHECK(gpu.domain.side == cpu.domain.side);
  for (int a = 0; a < p.dim; ++a) CHECK(gpu.domain.origin[a] == cpu.domain.origin[a]);
  CHECK(gpu.box_start == cpu.box_start);
  CHECK(gpu.order == cpu.order);
  CHECK(gpu.particle_box == cpu.particle_box);
  CHECK(gpu.nonempty == cpu.nonempty);
  CHECK(gpu.full.offset == cpu.full.offset);
  CHECK(gpu.full.ids == cpu.full.ids);
  CHECK(gpu.half.offset == cpu.half.offset);
  CHECK(gpu.half.ids == cpu.half.ids);
  CHECK(builder.tree().max_box_count == cpu.max_box_count());
  // The CPU tree is checked against the box rule in the CPU tests; equality carries it over.

  // The sorted bodies every near-field kernel reads.
  gpu::DeviceBuffer<Body<float>> bodies;
  gather_bodies<float>(dp, builder.tree(), bodies);
  const std::vector<Body<float>> b = bodies.download();
  REQUIRE(b.size() == p.size());
  for (std::size_t s = 0; s < b.size(); ++s) {
    const std::uint32_t i = cpu.order[s];
    CHECK(b[s].x == static_cast<float>(p.x[i]));
    CHECK(b[s].y == static_cast<float>(p.y[i]));
    CHECK(b[s].m == static_cast<float>(p.m[i]));
    if (p.dim == 3) CHECK(b[s].z == static_cast<float>(p.z[i]));
  }
}

}  // namespace

TEST_CASE("GPU tree builder equals the CPU builder on random inputs" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (int dim : {2, 3})
    for (const char* dist : {"uniform", "plummer", "clusters"})
      for (std::int64_t n : {1, 2, 33, 1000, 65537})
        for (int level : {0, 1, 3, dim == 2 ? 7 : 5}) check_same_tree(test::make(dist, dim, n, 100 + n), level, "");
  check_same_tree(test::make_exact(2, 7, 16), 7, "");
  check_same_tree(test::make_exact(3, 4, 9), 4, "");
  check_same_tree(test::make("uniform", 2, 300000, 5), 10, "");
}

TEST_CASE("GPU tree builder equals the CPU builder on adversarial inputs" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  check_same_tree(test::from_points(2, {}), 3, "");
  check_same_tree(test::from_points(3, {{0.5, 0.5, 0.5}}), 2, "");
  check_same_tree(test::from_points(3, std::vector<std::vector<double>>(999, {-1.0, 2.0, 3.0})), 4, "");
  std::vector<std::vector<double>> faces;
  for (int i = 0; i <= 16; ++i)
    for (int j = 0; j <= 16; ++j) faces.push_back({i / 16.0, j / 16.0});
  check_same_tree(test::from_points(2, faces), 4, "0,0,1");
  check_same_tree(test::from_points(2, faces), 4, "");
  check_same_tree(test::from_points(2, faces), 2, "-1,-1,2");
  // Negative coordinates and negative zero.
  check_same_tree(test::from_points(2, {{-0.0, 0.0}, {0.0, -0.0}, {-3.5, 2.0}, {1e-300, -1e-300}}), 3, "");
  std::vector<std::vector<double>> crowd;
  nf::Random r(8);
  for (int i = 0; i < 20000; ++i) crowd.push_back({0.5 + 1e-3 * r.uniform(), 0.5 + 1e-3 * r.uniform(), 0.5});
  crowd.push_back({0, 0, 0});
  crowd.push_back({1, 1, 1});
  check_same_tree(test::from_points(3, crowd), 5, "");
}

TEST_CASE("GPU tree build timings and the bare sort run" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  const Particles p = test::make_exact(2, 5, 8);
  const DeviceParticles dp = upload_particles(p);
  GpuTreeBuilder b(2, 5, p.size());
  GpuBuildTimes t;
  b.build(dp, nullptr, &t);
  CHECK(t.total > 0);
  CHECK(t.total == doctest::Approx(t.domain + t.keys + t.sort + t.box_starts + t.neighbors));
  const std::vector<double> sort = b.time_bare_sort(1, 3);
  CHECK(sort.size() == 3);
  CHECK(b.tree().max_box_count == 8u);
  CHECK(b.tree().nonempty_count == 1024u);
}
