// Several processes under MPI on the CPU (docs/design.md §15), run by CTest under mpirun with 2
// and with 3 ranks. Every rank generates the same input and computes the same decomposition,
// drives only its own part and posts only its own messages (MpiTransport):
// - the exchange itself, with test-only float64 parts (host_part.h), equals the same split in one
//   process bit for bit;
// - every registered CPU near-field kernel, spread over the ranks as nearfield-mpi spreads it
//   (make_spread_method with the MPI process group set), equals the kernel in one process bit for
//   bit where matches_one_gpu_bitwise says so, within the arithmetic's tolerance otherwise, and
//   passes against the float64 ground truth;
// - a failure on one rank is agreed by all (ProcessGroup::fail / checkpoint).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <limits>

#include "helpers.h"
#include "host_part.h"
#include "distributed/mpi_processes.h"
#include "core/errors.h"
#include "distributed/mpi_transport.h"
#include "distributed/spread_method.h"
#include "measure/validation.h"
#include "methods/registry.h"
#include "nearfield/cpu_simd.h"

using namespace nf;

TEST_CASE("one part per MPI process gives the forces of all parts in one process") {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MESSAGE("rank " << rank << " of " << ranks);
  struct Case {
    const char* name;
    Particles p;
    int level;
  };
  const Case cases[] = {{"uniform 2D", test::make("uniform", 2, 3001, 41), 4},
                        {"clusters 2D", test::make("clusters", 2, 4000, 42), 6},
                        {"plummer 3D", test::make("plummer", 3, 2500, 43), 3}};
  for (const Case& c : cases)
    for (CrossPairs cross : {CrossPairs::twice, CrossPairs::once}) {
      CAPTURE(c.name);
      CAPTURE(to_string(cross));
      MpiTransport t;
      const std::vector<double> mine = test::evaluate_split(c.p, c.level, ranks, cross, t, {rank});
      // Each row comes from exactly one rank: sum the values (zeros elsewhere) and the owners.
      std::vector<double> value(mine.size(), 0.0), owners(mine.size(), 0.0), all(mine.size()), count(mine.size());
      for (std::size_t i = 0; i < mine.size(); ++i)
        if (!std::isnan(mine[i])) value[i] = mine[i], owners[i] = 1;
      MPI_Reduce(value.data(), all.data(), static_cast<int>(value.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      MPI_Reduce(owners.data(), count.data(), static_cast<int>(owners.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank != 0) continue;
      LoopbackTransport loop;
      const std::vector<double> one = test::evaluate_split(c.p, c.level, ranks, cross, loop);
      bool covered = true;
      for (double n : count) covered = covered && n == 1.0;
      CHECK(covered);
      CHECK(all == one);
    }
}

TEST_CASE("registered CPU near-field kernels spread over the MPI processes match one process and the truth") {
  ProcessGroup& g = *process_group();
  REQUIRE(g.size() > 1);
  struct Case {
    const char* name;
    Particles p;
    int level;
  };
  const Case cases[] = {{"uniform 2D", test::make("uniform", 2, 4001, 61), 4},
                        {"clusters 2D", test::make("clusters", 2, 5000, 62), 6},
                        {"uniform 3D", test::make("uniform", 3, 3001, 63), 3},
                        {"plummer 3D", test::make("plummer", 3, 3000, 64), 3}};
  int spread_runs = 0;
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
        auto one = make_method(*k, s, c.p);
        one->prepare(c.p);
        one->evaluate();
        const std::vector<double> alone = one->accelerations();
        std::vector<CrossPairs> ways = {CrossPairs::automatic};
        if (k->newton3()) ways.push_back(CrossPairs::once);
        for (CrossPairs cross : ways) {
          CAPTURE(c.name);
          CAPTURE(k->name);
          CAPTURE(to_string(prec));
          CAPTURE(to_string(cross));
          auto m = make_spread_method(*k, s, c.p, Spread{1, cross});  // over the ranks
          m->prepare(c.p);
          m->poison_output();
          m->evaluate();
          const std::vector<double> got = m->accelerations();  // every rank's rows, on every rank
          if (matches_one_gpu_bitwise(*k, cross))
            CHECK(bitwise_equal(got, alone));
          else
            CHECK(compare(got, alone, masses, c.p.dim).rel_l2 <= tolerance(prec));
          CHECK(passes(compare(got, truth, masses, c.p.dim), tolerance(prec)));
          CHECK(m->times().evaluate_ms >= 0);  // the longest over the ranks (a collective too)
          ++spread_runs;
        }
      }
    }
  // 4 inputs, 2 precisions; 4 kernels, 2 of them Newton-3 also once; with Highway 3 more, 2 of them Newton-3.
  CHECK(spread_runs == 4 * 2 * (6 + (simd_kernels_built() ? 5 : 0)));
}

TEST_CASE("kernels that cannot be spread over processes are refused on every rank before any exchange") {
  const Particles p = test::make("uniform", 2, 500, 65);
  MethodSetup s;
  s.level = 3;
  CHECK_THROWS_WITH_AS(make_spread_method(find_kernel("cpu-allpairs"), s, p, Spread{}),
                       doctest::Contains("only near-field kernels"), UsageError);
  CHECK_THROWS_WITH_AS(make_spread_method(find_kernel("cpu-serial"), s, p, Spread{2, CrossPairs::automatic}),
                       doctest::Contains("under MPI"), UsageError);
}

TEST_CASE("ranks that read different inputs are refused on every rank before any exchange") {
  // Each rank's own input: one rank's masses doubled, or another seed (had run on silently, or
  // aborted inside MPI).
  const int rank = process_group()->rank();
  MethodSetup s;
  s.level = 3;
  Particles p = test::make("uniform", 2, 500, 66);
  if (rank == 1) p.m[7] *= 2;
  CHECK_THROWS_WITH_AS(make_spread_method(find_kernel("cpu-serial"), s, p, Spread{}),
                       doctest::Contains("read different inputs"), UsageError);
  const Particles q = test::make("uniform", 2, 500 + (rank == 0 ? 0 : 1), 66);
  CHECK_THROWS_WITH_AS(make_spread_method(find_kernel("cpu-serial"), s, q, Spread{}),
                       doctest::Contains("read different inputs"), UsageError);
  CHECK_NOTHROW(make_spread_method(find_kernel("cpu-serial"), s, test::make("uniform", 2, 500, 66), Spread{}));
}

TEST_CASE("a failure on one rank is agreed by all, with its status and message on rank 0") {
  ProcessGroup& g = *process_group();
  const int failing = g.size() - 1;
  ProcessGroup::Failure f;
  if (g.rank() == failing) {
    f = g.fail(2, "only the last rank fails");
  } else {
    bool agreed = false;
    try {
      g.checkpoint();
    } catch (const AgreedFailure&) {
      agreed = true;
    }
    CHECK(agreed);
    f = g.failed_elsewhere();
  }
  CHECK(f.rank == failing);
  CHECK(f.code == 2);
  if (g.rank() == 0 || g.rank() == failing) CHECK(f.message == "only the last rank fails");
  CHECK(g.agreed_max(g.rank()) == g.size() - 1);  // and the group goes on agreeing
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  set_process_group(mpi_process_group());
  doctest::Context context(argc, argv);
  const int code = context.run();
  int worst = code;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
