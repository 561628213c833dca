// The multi-GPU decomposition on the CPU: box counts, the split by cost, halos (against a brute
// force over box coordinates), the send/recv plan (both sides, particle by particle), the parts'
// inputs (their trees must have exactly the planned layout), and whole evaluations over parts in
// host memory through the same exchange code the GPUs run. Also the uniform-fast generator and
// the checks of --gpus / --cross-pairs.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "core/body.h"
#include "tree/domain.h"
#include "core/errors.h"
#include "ic/generate.h"
#include "physics/interaction.h"
#include "methods/force_method.h"
#include "measure/results.h"
#include "helpers.h"
#include "host_part.h"
#include "distributed/decomposition.h"
#include "tree/box_set.h"
#include "distributed/exchange.h"
#include "distributed/spread_method.h"
#include "distributed/nccl_transport.h"
#include "tree/morton.h"
#include "tree/tree.h"

using namespace nf;

namespace {

// Inputs of every kind the decomposition must handle: empty, one particle, odd counts, uniform,
// clustered (empty boxes between dense ones), 2D and 3D.
struct Case {
  std::string name;
  Particles p;
  int level;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"empty 2D", test::make("uniform", 2, 0), 3});
  c.push_back({"one particle 3D", test::make("uniform", 3, 1), 2});
  c.push_back({"uniform 2D odd", test::make("uniform", 2, 3001, 11), 4});
  c.push_back({"clusters 2D", test::make("clusters", 2, 4000, 12), 6});
  c.push_back({"uniform 3D", test::make("uniform", 3, 2500, 13), 3});
  c.push_back({"plummer 3D deep", test::make("plummer", 3, 3000, 14), 7});
  c.push_back({"corners 2D deep", test::make("corners", 2, 1000, 15), 12});
  return c;
}

// Brute force: boxes are adjacent when their coordinates differ by at most 1 along every axis.
bool adjacent(int dim, std::uint64_t a, std::uint64_t b) {
  if (a == b) return false;
  std::uint32_t ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
  if (dim == 2) {
    std::uint32_t a2[2], b2[2];
    morton_coords<2>(a, a2);
    morton_coords<2>(b, b2);
    std::copy(a2, a2 + 2, ca);
    std::copy(b2, b2 + 2, cb);
  } else {
    morton_coords<3>(a, ca);
    morton_coords<3>(b, cb);
  }
  for (int k = 0; k < dim; ++k)
    if (std::max(ca[k], cb[k]) - std::min(ca[k], cb[k]) > 1) return false;
  return true;
}

// Global sorted position of a part's local sorted position (one-GPU tree order).
std::uint64_t global_position(const BoxSet& b, const PartLayout& l, std::uint64_t s) {
  const std::size_t k = std::upper_bound(l.first.begin(), l.first.end(), s) - l.first.begin() - 1;
  return b.first[l.boxes[k]] + (s - l.first[k]);
}

void check_plan(const BoxSet& b, const Decomposition& d, const ExchangePlan& plan) {
  const int parts = d.size();
  REQUIRE(plan.parts.size() == std::size_t(parts));
  for (int g = 0; g < parts; ++g) {
    const Part& part = d.parts[g];
    const PartLayout& l = plan.parts[g].layout;
    // The layout: ascending boxes, own range where it says, offsets from the counts.
    CHECK(std::is_sorted(l.boxes.begin(), l.boxes.end()));
    CHECK(std::adjacent_find(l.boxes.begin(), l.boxes.end()) == l.boxes.end());
    REQUIRE(l.own_end - l.own_begin == part.last - part.first);
    for (std::uint32_t k = l.own_begin; k < l.own_end; ++k) CHECK(l.boxes[k] == part.first + (k - l.own_begin));
    std::set<std::uint32_t> halo(l.boxes.begin(), l.boxes.begin() + l.own_begin);
    halo.insert(l.boxes.begin() + l.own_end, l.boxes.end());
    std::set<std::uint32_t> want(part.halo.begin() + (plan.cross == CrossPairs::once ? part.upper_halo_begin : 0),
                                 part.halo.end());
    CHECK(halo == want);
    if (plan.cross == CrossPairs::once) CHECK(l.own_begin == 0);  // own boxes first
    REQUIRE(l.first.size() == l.boxes.size() + 1);
    for (std::size_t k = 0; k < l.boxes.size(); ++k) CHECK(l.first[k + 1] - l.first[k] == b.count[l.boxes[k]]);
    CHECK(l.own_last() - l.own_first() == part.own_particles);

    // Every halo particle arrives exactly once, from its box's owner.
    std::vector<int> from(l.particles(), -1);
    for (const PeerTransfer& t : plan.parts[g].peers) {
      CHECK(t.peer != g);
      for (std::uint64_t s = t.recv_begin; s < t.recv_begin + t.recv_count; ++s) {
        REQUIRE(s < l.particles());
        CHECK(from[s] == -1);
        from[s] = t.peer;
      }
    }
    for (std::size_t k = 0; k < l.boxes.size(); ++k)
      for (std::uint64_t s = l.first[k]; s < l.first[k + 1]; ++s)
        CHECK(from[s] == (k >= l.own_begin && k < l.own_end ? -1 : d.owner(l.boxes[k])));

    // Both sides agree: what g sends to q is what q receives from g, particle for particle.
    for (const PeerTransfer& t : plan.parts[g].peers) {
      const int q = t.peer;
      if (plan.cross == CrossPairs::once) CHECK((t.send.empty() || q < g));  // bodies go down, counterforces up
      const auto& qpeers = plan.parts[q].peers;
      const auto back = std::find_if(qpeers.begin(), qpeers.end(), [&](const PeerTransfer& u) { return u.peer == g; });
      REQUIRE(back != qpeers.end());
      REQUIRE(back->recv_count == t.send.size());
      CHECK(t.send.size() + t.recv_count > 0);
      for (std::size_t i = 0; i < t.send.size(); ++i) {
        CHECK(t.send[i] >= l.own_first());
        CHECK(t.send[i] < l.own_last());
        CHECK(global_position(b, l, t.send[i]) == global_position(b, plan.parts[q].layout, back->recv_begin + i));
      }
    }
  }
}

}  // namespace

TEST_CASE("count_boxes equals the CPU tree's boxes, counts and neighbor lists (dense and sorted counting)") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const Domain dom = default_domain(c.p);
    const Tree t = build_tree(c.p, c.level, dom, false);
    for (std::uint64_t limit : {kDenseCountLimit, std::uint64_t(0)}) {
      CAPTURE(limit);
      std::vector<std::uint32_t> particle_box;
      const BoxSet b = count_boxes(c.p, c.level, dom, &particle_box, limit);
      CHECK(b.key == t.box_key);
      REQUIRE(b.first.size() == t.box_first.size() + (t.box_first.empty() ? 1 : 0));
      for (std::size_t k = 0; k < t.box_first.size(); ++k) CHECK(b.first[k] == t.box_first[k]);
      CHECK(b.near.offset == t.near_full.offset);
      CHECK(b.near.ids == t.near_full.ids);
      REQUIRE(particle_box.size() == c.p.size());
      for (std::size_t s = 0; s < t.particles(); ++s) CHECK(particle_box[t.order[s]] == t.particle_slot[s]);
      CHECK(near_field_interactions(b) == near_field_interactions(box_set(t)));
      CHECK(b.max_count() == t.max_box_count());
    }
  }
}

TEST_CASE("split_by_cost covers the boxes in order and bounds the imbalance") {
  nf::Random r(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t m = r.below(60);
    std::vector<double> cost(m);
    for (double& c : cost) c = 1 + r.below(trial % 3 == 0 ? 1000 : 10);  // some with one heavy box
    if (m > 0 && trial % 5 == 0) cost[r.below(m)] = 1e6;
    const int parts = 1 + static_cast<int>(r.below(9));
    const auto bounds = split_by_cost(cost, parts);
    REQUIRE(bounds.size() == std::size_t(parts) + 1);
    CHECK(bounds.front() == 0);
    CHECK(bounds.back() == m);
    CHECK(std::is_sorted(bounds.begin(), bounds.end()));
    double total = 0, biggest = 0;
    for (double c : cost) total += c, biggest = std::max(biggest, c);
    for (int g = 0; g < parts; ++g) {
      double part = 0;
      for (std::uint32_t k = bounds[g]; k < bounds[g + 1]; ++k) part += cost[k];
      CHECK(part <= total / parts + biggest + 1e-9 * total);
    }
  }
  // One part is the identity; more parts than boxes leaves parts empty.
  CHECK(split_by_cost({3, 1, 2}, 1) == std::vector<std::uint32_t>{0, 3});
  const auto many = split_by_cost({1, 1}, 5);
  CHECK(many.front() == 0);
  CHECK(many.back() == 2);
  CHECK(std::count_if(many.begin(), many.end() - 1, [&](std::uint32_t v) { return v < 2; }) >= 2);
  CHECK(split_by_cost({}, 3) == std::vector<std::uint32_t>{0, 0, 0, 0});
  CHECK_THROWS_AS(split_by_cost({1}, 0), std::logic_error);
}

TEST_CASE("decompose: every box owned exactly once, halos exactly the adjacent boxes outside the range") {
  for (const Case& c : cases()) {
    const Domain dom = default_domain(c.p);
    const BoxSet b = count_boxes(c.p, c.level, dom);
    const std::vector<double> cost = box_costs(b);
    for (int parts : {1, 2, 3, 5, 64}) {
      CAPTURE(c.name);
      CAPTURE(parts);
      const Decomposition d = decompose(b, parts);
      REQUIRE(d.size() == parts);
      std::vector<int> owners(b.boxes(), 0);
      double total = 0;
      for (int g = 0; g < parts; ++g) {
        const Part& part = d.parts[g];
        CHECK(part.first == d.bounds[g]);
        CHECK(part.last == d.bounds[g + 1]);
        for (std::uint32_t k = part.first; k < part.last; ++k) {
          ++owners[k];
          CHECK(d.owner(k) == g);
        }
        total += part.cost;
        CHECK(part.cost <= d.total_cost / parts + d.max_box_cost + 1e-9 * d.total_cost);
        // Brute force over every box of the input.
        std::vector<std::uint32_t> halo;
        for (std::uint32_t h = 0; h < b.boxes(); ++h) {
          if (h >= part.first && h < part.last) continue;
          for (std::uint32_t k = part.first; k < part.last; ++k)
            if (adjacent(b.dim, b.key[h], b.key[k])) {
              halo.push_back(h);
              break;
            }
        }
        CHECK(part.halo == halo);
        for (std::uint32_t i = 0; i < part.halo.size(); ++i) CHECK((i >= part.upper_halo_begin) == (part.halo[i] >= part.last));
        if (parts == 1) CHECK(part.halo.empty());
      }
      CHECK(std::all_of(owners.begin(), owners.end(), [](int o) { return o == 1; }));
      CHECK(total == doctest::Approx(d.total_cost));
      if (parts == 64 && b.boxes() < 64) CHECK(std::any_of(d.parts.begin(), d.parts.end(), [](const Part& p) { return p.first == p.last; }));
    }
  }
}

TEST_CASE("exchange plan: both sides agree, halo particles arrive once from their owner; part trees match the layout") {
  for (const Case& c : cases()) {
    const Domain dom = default_domain(c.p);
    std::vector<std::uint32_t> particle_box;
    const BoxSet b = count_boxes(c.p, c.level, dom, &particle_box);
    const Tree whole = build_tree(c.p, c.level, dom, false);
    for (int parts : {1, 2, 4, 7}) {
      const Decomposition d = decompose(b, parts);
      for (CrossPairs cross : {CrossPairs::twice, CrossPairs::once}) {
        CAPTURE(c.name);
        CAPTURE(parts);
        CAPTURE(to_string(cross));
        const ExchangePlan plan = exchange_plan(b, d, cross);
        check_plan(b, d, plan);
        if (parts == 1) {
          CHECK(plan.parts[0].peers.empty());
          CHECK(plan.parts[0].layout.particles() == c.p.size());
        }
        const auto rows = part_rows(particle_box, plan, b.boxes());
        REQUIRE(rows.size() == std::size_t(parts));
        std::uint64_t moved = 0;
        for (int g = 0; g < parts; ++g) {
          const PartLayout& l = plan.parts[g].layout;
          // Rows: ascending, exactly the particles of the layout's boxes.
          CHECK(std::is_sorted(rows[g].begin(), rows[g].end()));
          const std::set<std::uint32_t> held(l.boxes.begin(), l.boxes.end());
          std::uint64_t expect = 0;
          for (std::size_t i = 0; i < c.p.size(); ++i) expect += held.count(particle_box[i]);
          CHECK(rows[g].size() == expect);
          for (std::uint32_t r : rows[g]) CHECK(held.count(particle_box[r]) == 1);
          // The part's own tree, over the whole input's domain, has the layout's boxes in order.
          const Particles part = select_rows(c.p, rows[g]);
          const Tree t = build_tree(part, c.level, dom, false);
          REQUIRE(t.nonempty_boxes() == l.boxes.size());
          for (std::size_t k = 0; k < l.boxes.size(); ++k) {
            CHECK(t.box_key[k] == b.key[l.boxes[k]]);
            CHECK(t.box_first[k] == l.first[k]);
          }
          // Within a box, the one-GPU tree's order (input order).
          for (std::uint64_t s = 0; s < l.particles(); ++s)
            CHECK(rows[g][t.order[s]] == whole.order[global_position(b, l, s)]);
          for (const PeerTransfer& tr : plan.parts[g].peers) moved += tr.recv_count;
        }
        CHECK(plan.moved_bodies() == moved);
        CHECK_FALSE(describe(d, plan).empty());
      }
    }
  }
}

TEST_CASE("decompose refuses zero parts; select_rows keeps positions and masses") {
  const Particles p = test::make("uniform", 3, 50);
  const BoxSet b = count_boxes(p, 2, default_domain(p));
  CHECK_THROWS_AS(decompose(b, 0), UsageError);
  const Particles s = select_rows(p, {4, 0, 49});
  REQUIRE(s.size() == 3);
  CHECK(s.dim == 3);
  CHECK(s.x[0] == p.x[4]);
  CHECK(s.z[1] == p.z[0]);
  CHECK(s.m[2] == p.m[49]);
}

// --- The evaluation over parts, on the host: the same exchange code the GPUs run ----------------
namespace {

std::vector<double> evaluate_split(const Case& c, int parts, CrossPairs cross, std::size_t* messages = nullptr) {
  LoopbackTransport t;
  std::size_t expect = 0;
  const std::vector<double> out = test::evaluate_split(c.p, c.level, parts, cross, t, {}, &expect);
  CHECK(t.messages() == expect);
  if (messages) *messages = t.messages();
  return out;
}

}  // namespace

TEST_CASE("evaluation over parts on the host: twice equals one part bit for bit, once within 1e-12") {
  for (const Case& c : cases()) {
    const std::vector<double> whole = evaluate_split(c, 1, CrossPairs::twice);
    for (double v : whole) REQUIRE(std::isfinite(v));
    const std::vector<double> whole_once = evaluate_split(c, 1, CrossPairs::once);
    for (int parts : {2, 3, 5}) {
      CAPTURE(c.name);
      CAPTURE(parts);
      std::size_t messages = 0;
      const std::vector<double> twice = evaluate_split(c, parts, CrossPairs::twice, &messages);
      CHECK(twice == whole);  // same pairs, same order: bitwise (NaN would differ)
      if (c.name.rfind("uniform", 0) == 0) CHECK(messages > 0);
      const std::vector<double> once = evaluate_split(c, parts, CrossPairs::once);
      double diff = 0, norm = 0;
      for (std::size_t i = 0; i < whole.size(); ++i) {
        REQUIRE(std::isfinite(once[i]));
        diff += (once[i] - whole_once[i]) * (once[i] - whole_once[i]);
        norm += whole[i] * whole[i];
      }
      CHECK(std::sqrt(diff) <= 1e-12 * std::sqrt(norm));
      // And the Newton-3 sums agree with the full lists (a dropped or doubled pair would not).
      double diff_full = 0;
      for (std::size_t i = 0; i < whole.size(); ++i) diff_full += (once[i] - whole[i]) * (once[i] - whole[i]);
      CHECK(std::sqrt(diff_full) <= 1e-12 * std::sqrt(norm));
    }
  }
}

TEST_CASE("loopback transport refuses unmatched or mismatched messages") {
  LoopbackTransport t;
  int a = 1, b = 0;
  t.group_start();
  t.send(0, 1, &a, sizeof a);
  CHECK_THROWS_AS(t.group_end(), std::logic_error);
  t.group_start();
  t.send(0, 1, &a, sizeof a);
  t.recv(1, 0, &b, 2);
  CHECK_THROWS_AS(t.group_end(), std::logic_error);
  t.group_start();
  t.send(0, 1, &a, sizeof a);
  t.recv(1, 0, &b, sizeof b);
  t.group_end();
  CHECK(b == 1);
  CHECK(t.messages() == 1);
  CHECK_THROWS_AS(t.send(0, 1, &a, sizeof a), std::logic_error);
}

TEST_CASE("loopbacks check every message of a group before they move any; the device one copies on the GPU") {
  int a = 1, b = 2, x = 0, y = 0;
  auto mismatched_group = [&](LoopbackTransport& t) {
    t.group_start();
    t.send(0, 1, &a, sizeof a);
    t.recv(1, 0, &x, sizeof x);  // matches
    t.send(1, 0, &b, sizeof b);
    t.recv(0, 1, &y, 1);  // does not
    CHECK_THROWS_AS(t.group_end(), std::logic_error);
  };
  LoopbackTransport host;
  mismatched_group(host);
  CHECK(x == 0);  // nothing moved
  CHECK(host.messages() == 0);
  DeviceLoopbackTransport device;
  mismatched_group(device);  // refused before any device copy, so also without a GPU
  CHECK(device.messages() == 0);
  device.group_start();
  device.send(0, 1, &a, sizeof a);
  CHECK_THROWS_AS(device.group_end(), std::logic_error);  // a send nobody receives
  if (!gpu::available()) {  // a matched message is a device copy: refused with the reason
    device.group_start();
    device.send(0, 1, &a, sizeof a);
    device.recv(1, 0, &x, sizeof x);
    CHECK_THROWS_AS(device.group_end(), UsageError);
  }
}

TEST_CASE("NEARFIELD_EMULATE_GPUS=1 is what turns emulation on; without a GPU it is refused like --gpus") {
  test::EnvScope emulate("NEARFIELD_EMULATE_GPUS", nullptr);
  CHECK_FALSE(emulating_gpus());
  emulate.set("0");
  CHECK_FALSE(emulating_gpus());
  emulate.set("yes");
  CHECK_FALSE(emulating_gpus());
  emulate.set("1");
  CHECK(emulating_gpus());
  CHECK_THROWS_AS(check_gpus(find_kernel("cpu-serial"), 2), UsageError);  // still GPU near-field kernels only
  CHECK_THROWS_AS(check_gpus(find_kernel("allpairs-tiled"), 2), UsageError);
  CHECK_THROWS_AS(check_gpus(find_kernel("bpb"), 0), UsageError);
  if (!gpu::available())
    CHECK_THROWS_WITH_AS(check_gpus(find_kernel("bpb"), 2), doctest::Contains("needs a CUDA GPU"), UsageError);
}

TEST_CASE("uniform-fast: uniform in [0,1)^D, the same for any thread count, seeded") {
  GenerateOptions g;
  g.dist = "uniform-fast";
  g.dim = 3;
  g.n = 100001;
  g.seed = 9;
  g.mass = "random";
  omp_set_num_threads(1);
  const Particles one = generate(g);
  omp_set_num_threads(2);
  const Particles two = generate(g);
  cli::apply_threads(0);
  CHECK(one.x == two.x);
  CHECK(one.y == two.y);
  CHECK(one.z == two.z);
  CHECK(one.m == two.m);
  double sum[3] = {0, 0, 0}, mass = 0;
  for (std::size_t i = 0; i < one.size(); ++i) {
    for (int a = 0; a < 3; ++a) {
      const double v = one.coord(i, a);
      REQUIRE(v >= 0.0);
      REQUIRE(v < 1.0);
      sum[a] += v;
    }
    CHECK(one.m[i] >= 0.5 / one.size());
    CHECK(one.m[i] < 1.5 / one.size());
    mass += one.m[i];
  }
  for (double s : sum) CHECK(s / one.size() == doctest::Approx(0.5).epsilon(0.01));
  CHECK(mass == doctest::Approx(1.0).epsilon(0.01));
  // Boxes fill evenly: level 3 has 512 boxes of about 195 particles each.
  const BoxSet b = count_boxes(one, 3, default_domain(one));
  CHECK(b.boxes() == 512);
  for (std::uint32_t c : b.count) CHECK(std::abs(int(c) - 195) < 80);
  g.seed = 10;
  CHECK(generate(g).x != one.x);
  g.dim = 2;
  g.mass = "equal";
  const Particles flat = generate(g);
  CHECK(flat.z.empty());
  CHECK(flat.m[0] == 1.0 / flat.size());
}

TEST_CASE("--gpus and --cross-pairs are checked before any work") {
  test::TempDir dir;
  auto r = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial", "--gpus",
                          "2", "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("CPU kernel") != std::string::npos);
  r = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial", "--gpus", "0",
                     "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("at least 1") != std::string::npos);
  r = test::run_cli({"forces", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial",
                     "--cross-pairs", "thrice", "--output", dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("thrice") != std::string::npos);
  r = test::run_cli({"bench", "--dist", "uniform", "--n", "50", "--level", "2", "--kernel", "cpu-serial,cpu-n3", "--gpus",
                     "1,2", "--output", dir.file("r.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("--gpus 2") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("r.csv")));
  // Without a GPU (this build or machine) every GPU kernel is refused with the reason.
  if (!gpu::available()) {
    r = test::run_cli({"validate", "--dist", "uniform", "--n", "50", "--level", "2", "--gpus", "2"});
    CHECK(r.code == 2);
    CHECK(r.err.find("GPU") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_cross_pairs("both"), UsageError);
  CHECK(parse_cross_pairs("once") == CrossPairs::once);
  CHECK(std::string(to_string(CrossPairs::automatic)) == "auto");
}

TEST_CASE("cross pairs: auto is once for Newton-3 kernels with atomics, twice otherwise; once needs Newton-3") {
  for (const KernelInfo* k : kernels_with(kGpu | kNearField)) {
    CAPTURE(k->name);
    const CrossPairs a = resolve_cross_pairs(*k, CrossPairs::automatic);
    CHECK(a == (k->newton3() && !k->deterministic() ? CrossPairs::once : CrossPairs::twice));
    CHECK(resolve_cross_pairs(*k, CrossPairs::twice) == CrossPairs::twice);
    if (k->newton3())
      CHECK(resolve_cross_pairs(*k, CrossPairs::once) == CrossPairs::once);
    else
      CHECK_THROWS_AS(resolve_cross_pairs(*k, CrossPairs::once), UsageError);
    CHECK(matches_one_gpu_bitwise(*k, CrossPairs::automatic) == k->deterministic());
    if (k->newton3()) CHECK_FALSE(matches_one_gpu_bitwise(*k, CrossPairs::once));
  }
}

TEST_CASE("results files written before --gpus read as one-GPU rows, so a resumed sweep skips them") {
  test::TempDir dir;
  const std::string out = dir.file("r.csv");
  const std::vector<std::string> args = {"bench", "--dist", "uniform", "--n", "300", "--level", "2", "--kernel",
                                         "cpu-serial", "--reps", "1", "--warmup", "0", "--output", out};
  REQUIRE(test::run_cli(args).code == 0);
  // Drop the multi-GPU columns, as a file of an earlier version lacks them.
  std::istringstream in(test::read_text(out));
  std::string header, row, text;
  std::getline(in, header);
  std::getline(in, row);
  const auto h = split_csv_line(header), v = split_csv_line(row);
  std::string h2, v2;
  for (std::size_t c = 0; c < h.size(); ++c) {
    if (h[c] == "gpus" || h[c] == "cross_pairs" || h[c] == "comm_ms" || h[c] == "comm_share" || h[c] == "kernel_max_ms" ||
        h[c] == "kernel_imbalance" || h[c] == "halo_bodies")
      continue;
    h2 += (h2.empty() ? "" : ",") + h[c];
    v2 += (v2.empty() && c == 0 ? "" : ",") + v[c];
  }
  test::write_text(out, h2 + "\n" + v2 + "\n");
  std::vector<std::string> resume = args;
  resume.push_back("--resume");
  const auto r = test::run_cli(resume);
  CHECK(r.code == 0);
  CHECK(r.err.find("already in") != std::string::npos);
  const ResultsFile f(out, {"kernel", "gpus"});
  REQUIRE(f.rows().size() == 1);
  const auto at = std::find(f.columns().begin(), f.columns().end(), "gpus") - f.columns().begin();
  CHECK(f.rows()[0][at] == "1");
}

TEST_CASE("libnccl candidates: existing files only, the CUDA toolkit's copy among them when it is there") {
  const std::vector<std::string> c = nccl_library_candidates();
  for (const std::string& f : c) {
    CHECK(std::filesystem::is_regular_file(f));
    CHECK(f.size() >= 12);
    CHECK(f.substr(f.size() - 12) == "libnccl.so.2");
  }
  for (const char* known : {"/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda-13.0/lib/libnccl.so.2"})
    if (std::filesystem::exists(known)) CHECK(std::find(c.begin(), c.end(), std::string(known)) != c.end());
  if (!nccl_compiled()) CHECK_THROWS_AS(load_nccl(), UsageError);
}
