// CPU near-field kernels spread over parts (docs/design.md §15, "CPU kernels under MPI"), every
// part in this process over the loopback transport: the per-rank code of nearfield-mpi without
// MPI. Each registered CPU near-field kernel must give the one-part result bit for bit where
// matches_one_gpu_bitwise says so, within the arithmetic's tolerance otherwise (counterforces
// summed in another order), and pass against the float64 ground truth.
#include <cstdint>
#include <limits>

#include "core/errors.h"
#include "distributed/host_spread_method.h"
#include "measure/validation.h"
#include "methods/registry.h"
#include "helpers.h"

using namespace nf;

namespace {

std::vector<double> run(ForceMethod& m, const Particles& p) {
  m.prepare(p);
  m.poison_output();
  m.evaluate();
  return m.accelerations();
}

}  // namespace

TEST_CASE("every CPU near-field kernel split into parts matches one part and the ground truth") {
  struct Case {
    const char* name;
    Particles p;
    int level;
  };
  const Case cases[] = {{"uniform 2D", test::make("uniform", 2, 2001, 51), 4},
                        {"clusters 2D", test::make("clusters", 2, 2500, 52), 5},
                        {"plummer 3D", test::make("plummer", 3, 1800, 53), 3}};
  for (const Case& c : cases)
    for (Precision prec : {Precision::f32, Precision::f64}) {
      MethodSetup s;
      s.level = c.level;
      s.precision = prec;
      s.softening = 1e-3;
      std::string name;
      const std::vector<double> truth = ground_truth(c.p, s, prec, std::numeric_limits<std::size_t>::max(), name);
      const std::vector<double> masses = masses_as_seen(c.p, prec);
      for (const KernelInfo* k : kernels_with(kNearField, kGpu)) {
        if (!k->make_host_part) continue;
        std::vector<CrossPairs> ways = {CrossPairs::automatic};
        if (k->newton3()) ways.push_back(CrossPairs::once);
        const std::vector<double> one = run(*make_method(*k, s, c.p), c.p);
        for (int parts : {2, 3, 5})
          for (CrossPairs cross : ways) {
            CAPTURE(c.name);
            CAPTURE(k->name);
            CAPTURE(to_string(prec));
            CAPTURE(parts);
            CAPTURE(to_string(cross));
            HostCluster cluster;
            cluster.parts = parts;
            for (int g = 0; g < parts; ++g) cluster.local.push_back(g);
            cluster.transport = std::make_shared<LoopbackTransport>();
            const auto m = make_host_cluster_method(*k, s, Spread{parts, cross}, cluster);
            const std::vector<double> got = run(*m, c.p);
            if (matches_one_gpu_bitwise(*k, cross))
              CHECK(bitwise_equal(got, one));
            else
              CHECK(compare(got, one, masses, c.p.dim).rel_l2 <= tolerance(prec));
            CHECK(passes(compare(got, truth, masses, c.p.dim), tolerance(prec)));
            CHECK(m->rows_computed_here().size() == c.p.size());
          }
      }
    }
}

TEST_CASE("a kernel without host parts is refused before any work") {
  HostCluster cluster;
  cluster.parts = 2;
  cluster.local = {0, 1};
  cluster.transport = std::make_shared<LoopbackTransport>();
  MethodSetup s;
  s.level = 3;
  CHECK_THROWS_WITH_AS(make_host_cluster_method(find_kernel("cpu-allpairs"), s, Spread{2, CrossPairs::automatic}, cluster),
                       doctest::Contains("only the CPU near-field kernels"), UsageError);
  CHECK_THROWS_AS(make_host_cluster_method(find_kernel("cpu-serial"), s, Spread{2, CrossPairs::once}, cluster),
                  UsageError);  // once needs Newton-3
}
