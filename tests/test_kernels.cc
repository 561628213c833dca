// Every kernel against the float64 reference, written once for the CPU and the GPU: each body
// takes the kernels it runs (the registry's, selected by trait, so a newly registered kernel is
// checked by every input without being listed) and each test exists twice (NF_KERNEL_TEST), for
// the CPU kernels (executable test_kernels) and for the GPU kernels (suite "gpu" of test_gpu,
// skipped visibly without a device). Here: random and adversarial inputs (sizes 0, 1, 2, odd,
// faces, empty and crowded boxes, coincident points with eps = 0, level 0 and 1, 2D/3D,
// float/double), all-pairs kernels at any N, boxes of 1..600 particles; the claims (determinism,
// Newton-3 and small-box counts against the model); validate through the command line. Big boxes
// and extreme layouts: test_kernels_extreme.cc.
#include <omp.h>

#include <algorithm>
#include <set>

#include "force_checks.h"
#include "measure/model.h"
#include "tree/box_set.h"

using namespace nf;

namespace {

// --- accuracy ------------------------------------------------------------------------------------

void random_and_adversarial(const test::Kernels& k) {
  for (const test::NearFieldInput& in : test::near_field_inputs()) {
    CAPTURE(in.what);
    test::check_near_field(k, in.p, in.level, in.domain, test::kBothPrecisions, {1e-3, 0.0});
  }
}
NF_KERNEL_TEST("near-field kernels match the float64 reference on random and adversarial inputs",
               random_and_adversarial)

void level_one(const test::Kernels& k) {
  // At level 1 every box is adjacent to every other: the near field is all pairs.
  const Particles p = test::make("plummer", 2, 700, 3);
  const auto all = test::naive_reference(p, 1, default_domain(p), 1e-3, Precision::f64, true);
  for (const std::string& name : k.near_field)
    test::check_kernel(p, {name, Precision::f64, 1, 1e-3, Mask::near, ""}, all);
}
NF_KERNEL_TEST("level 1: the near field is every pair", level_one)

void coincident(const test::Kernels& k) {
  // 50 coincident points beside a line of 50 (2D); 300 coincident among 300 random ones (3D);
  // three coincident and one apart (3D).
  std::vector<std::vector<double>> flat(50, {0.3, 0.3});
  for (int i = 0; i < 50; ++i) flat.push_back({0.6 + 0.001 * i, 0.7});
  std::vector<std::vector<double>> cloud(300, {0.5, 0.25, 0.75});
  nf::Random r(3);
  for (int i = 0; i < 300; ++i) cloud.push_back({r.uniform(), r.uniform(), r.uniform()});
  const Particles four = test::from_points(3, {{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0.25, 0.5, 0.5}});
  for (const Particles& p : {test::from_points(2, flat), test::from_points(3, cloud), four}) {
    CAPTURE(p.size());
    // Guarded (eps = 0) and unguarded evaluation.
    test::check_near_field(k, p, 2, "", test::kBothPrecisions, {0.0, 1e-3});
    for (double eps : {0.0, 1e-3})
      for (Precision prec : test::kBothPrecisions)
        for (Mask mask : {Mask::all, Mask::near})
          for (const std::string& name : k.all_pairs) test::check_kernel(p, {name, prec, 2, eps, mask, ""});
  }
  // The three coincident particles and the one at distance 0.25 (all near at level 1), eps = 0:
  // the coincident pairs contribute zero, so particle 3 is pulled by the sum of the others'
  // masses over 0.0625 and each coincident one by particle 3 alone.
  const Particles& p = four;
  MethodSetup s;
  s.level = 1;
  s.domain = default_domain(p);
  s.softening = 0.0;
  s.precision = Precision::f64;
  std::vector<std::string> names = k.near_field;
  names.insert(names.end(), k.all_pairs.begin(), k.all_pairs.end());
  for (const std::string& name : names) {
    CAPTURE(name);
    const auto a = test::forces(find_kernel(name), p, s);
    CHECK(a[9] == doctest::Approx((p.m[0] + p.m[1] + p.m[2]) / 0.0625));
    CHECK(a[0] == doctest::Approx(-p.m[3] / 0.0625));
  }
}
NF_KERNEL_TEST("coincident points with eps = 0 and eps > 0: finite, and the coincident pairs contribute zero",
               coincident)

void all_pairs_sizes(const test::Kernels& k) {
  nf::Random r(77);
  std::vector<std::int64_t> sizes = {0, 1, 2, 31, 127, 129, 257, 1000, 1200, 4097};
  for (int i = 0; i < 3; ++i) sizes.push_back(2 + static_cast<std::int64_t>(r.below(3000)));
  for (std::int64_t n : sizes)
    for (int dim : {2, 3}) {
      const Particles p = test::make(n % 3 ? "uniform" : "plummer", dim, n, 500 + n + dim);
      const int level = dim == 2 ? 4 : 3;
      for (Mask mask : {Mask::all, Mask::near})
        for (Precision prec : test::kBothPrecisions) {
          const auto ref = test::naive_reference(p, level, default_domain(p), 1e-3, prec, mask == Mask::all);
          for (const std::string& name : k.all_pairs) test::check_kernel(p, {name, prec, level, 1e-3, mask, ""}, ref);
        }
    }
}
NF_KERNEL_TEST("all-pairs kernels: any N, both masks, 2D/3D, float/double", all_pairs_sizes)

void uniform_exact_boxes(const test::Kernels& k) {
  // Block sizes, chunks and last partial warps: 1..600 particles in every box.
  for (std::int64_t ppb : {1, 2, 31, 33, 56, 57, 64, 100, 513, 600}) {
    CAPTURE(ppb);
    const int level = ppb > 100 ? 2 : 4;
    test::check_near_field(k, test::make_exact(2, level, ppb, 900 + ppb), level, "", test::kBothPrecisions);
  }
}
NF_KERNEL_TEST("near-field kernels: uniform-exact boxes of 1..600 particles (block sizes, chunks, last partial warps)",
               uniform_exact_boxes)

// --- claims ----------------------------------------------------------------------------------------

void repeatable(const test::Kernels& k) {
  // Kernels claiming determinism give the same bits on every evaluation of one prepare; OpenMP
  // kernels at a fixed thread count (here 3 and 4, not the machine's).
  const int before = omp_get_max_threads();
  const Particles p = test::make("clusters", 3, 4000, 11);
  std::vector<std::string> names = k.near_field;
  names.insert(names.end(), k.all_pairs.begin(), k.all_pairs.end());
  for (const std::string& name : names) {
    const KernelInfo& info = find_kernel(name);
    if (!info.deterministic()) continue;
    for (int threads : info.openmp() ? std::vector<int>{3, 4} : std::vector<int>{before}) {
      CAPTURE(name);
      CAPTURE(threads);
      omp_set_num_threads(threads);
      MethodSetup s;
      s.level = 3;
      s.domain = default_domain(p);
      s.precision = Precision::f32;
      s.mask = Mask::near;
      auto m = make_method(info, s, p);
      m->prepare(p);
      m->evaluate();
      const std::vector<double> first = m->accelerations();
      for (int run = 0; run < 4; ++run) {
        m->poison_output();
        m->evaluate();
        CHECK(test::same_bits(m->accelerations(), first));
      }
    }
  }
  omp_set_num_threads(before);
}
NF_KERNEL_TEST("deterministic kernels repeat bit for bit (OpenMP ones at a fixed thread count), on clustered input",
               repeatable)

// Directed interactions a Newton-3 kernel that computes small boxes one particle per thread may
// count on `b`, whatever the small-box limits are (SmallBoxPolicy's, or NEARFIELD_SMALL_BOX's):
// a box is small when it holds fewer than COUNT particles and at most SOURCES in its near field;
// a small box's particles take every source one-sided, the pairs of two other boxes are
// evaluated once. So the count is the full count less one per unordered near pair with no
// particle in a small box, for the small set of some COUNT and SOURCES.
std::set<std::uint64_t> small_box_counts(const BoxSet& b) {
  const std::uint32_t m = b.boxes();
  std::vector<std::uint64_t> sources(m);
  std::set<std::uint64_t> counts = {0}, limits = {0};  // candidate COUNT and SOURCES thresholds
  for (std::uint32_t k = 0; k < m; ++k) {
    sources[k] = b.count[k];
    for (std::uint32_t l = b.near.offset[k]; l < b.near.offset[k + 1]; ++l) sources[k] += b.count[b.near.ids[l]];
    counts.insert(b.count[k] + 1ull);
    limits.insert(sources[k]);
  }
  const std::uint64_t full = near_field_interactions(b);
  std::set<std::uint64_t> out;
  for (std::uint64_t c : counts)
    for (std::uint64_t s : limits) {
      std::vector<bool> small(m);
      for (std::uint32_t k = 0; k < m; ++k) small[k] = b.count[k] < c && sources[k] <= s;
      std::uint64_t twice_once = 0;  // twice the pairs evaluated once
      for (std::uint32_t k = 0; k < m; ++k) {
        if (small[k]) continue;
        const std::uint64_t n = b.count[k];
        twice_once += n * (n - (n > 0));
        for (std::uint32_t l = b.near.offset[k]; l < b.near.offset[k + 1]; ++l)
          if (!small[b.near.ids[l]]) twice_once += n * b.count[b.near.ids[l]];
      }
      out.insert(full - twice_once / 2);
    }
  return out;
}

// Counting mode: the interactions kernel `name` evaluates on p at `level`, against the full count.
void check_count(const std::string& name, const Particles& p, int level, const BoxSet& boxes) {
  const KernelInfo& info = find_kernel(name);
  const std::uint64_t full = near_field_interactions(boxes);
  const std::uint64_t got = test::count_interactions(p, name, level);
  CAPTURE(name);
  CAPTURE(full);
  if (!info.newton3()) {
    CHECK(got == full);
  } else if (!info.small_boxes()) {
    CHECK(2 * got == full);
  } else {
    const std::set<std::uint64_t> allowed = small_box_counts(boxes);
    CAPTURE(got);
    CHECK(allowed.count(got) == 1);
  }
}

void counting(const test::Kernels& k) {
  for (int dim : {2, 3})
    for (int level : {0, 1, 2, 3, 4})
      for (std::int64_t ppb : {1, 3, 5, 8, 40}) {
        if (dim == 3 && (level == 4 || (level == 3 && ppb > 5))) continue;
        CAPTURE(dim);
        CAPTURE(level);
        CAPTURE(ppb);
        const Particles p = test::make_exact(dim, level, ppb);
        const BoxSet boxes = count_boxes(p, level, default_domain(p));
        // The model's N(P-1) + B P^2, and half of it with Newton-3.
        REQUIRE(near_field_interactions(boxes) == cp_bpb(dim, level, ppb));
        REQUIRE(2 * cp_bpb_n3(dim, level, ppb) == cp_bpb(dim, level, ppb));
        for (const std::string& name : k.near_field) check_count(name, p, level, boxes);
      }
  // Chunked boxes count the same: 1300 particles in one box, level 0.
  const Particles p = test::make("uniform", 2, 1300, 4);
  const BoxSet one = count_boxes(p, 0, default_domain(p));
  REQUIRE(near_field_interactions(one) == 1300ull * 1299);
  for (const std::string& name : k.near_field) check_count(name, p, 0, one);
}
NF_KERNEL_TEST("counting mode: kernels evaluate exactly the near-field pairs (half of them with Newton-3)", counting)

// --- through the command line ---------------------------------------------------------------------

std::string kernel_list(const test::Kernels& k) {
  std::string list;
  for (const auto* names : {&k.near_field, &k.all_pairs})
    for (const std::string& name : *names) list += (list.empty() ? "" : ",") + name;
  return list;
}

void validate_command(const test::Kernels& k) {
  for (const std::vector<std::string>& input :
       {std::vector<std::string>{"--dist", "clusters", "--dim", "3", "--n", "3000", "--level", "3"},
        std::vector<std::string>{"--dist", "clusters", "--dim", "2", "--n", "6000", "--level", "5"}}) {
    std::vector<std::string> args = {"validate", "--precision", "float,double", "--kernel", kernel_list(k)};
    args.insert(args.end(), input.begin(), input.end());
    const auto r = test::run_cli(args);
    INFO(r.out);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("all kernels PASS") != std::string::npos);
    CHECK(r.out.find("FAIL") == std::string::npos);
    for (const auto* names : {&k.near_field, &k.all_pairs})
      for (const std::string& name : *names) CHECK_MESSAGE(r.out.find(name) != std::string::npos, name);
    // At most --cpu-reference-limit particles (default 20000), the reference is cpu-allpairs.
    CHECK(r.out.find("cpu-allpairs --mask near, float64 on float32-rounded inputs") != std::string::npos);
  }
  // Above the limit the reference is the GPU's tiled kernel where there is a GPU (docs/design.md §4).
  std::string near_field;
  for (const std::string& name : k.near_field) near_field += (near_field.empty() ? "" : ",") + name;
  const auto r = test::run_cli({"validate", "--dist", "uniform-exact", "--dim", "3", "--level", "2", "--ppb", "40",
                                "--kernel", near_field, "--cpu-reference-limit", "1000"});
  INFO(r.out);
  INFO(r.err);
  CHECK(r.code == 0);
  const std::string reference = gpu::available() ? "allpairs-tiled" : "cpu-allpairs";
  CHECK(r.out.find(reference + " --mask near, float64 on float32-rounded inputs") != std::string::npos);
}
NF_KERNEL_TEST("validate runs every kernel through the command line and reports PASS", validate_command)

}  // namespace
