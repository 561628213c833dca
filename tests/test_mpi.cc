// The path across hosts on the CPU: one part per MPI process (run under mpirun with several
// ranks). Every rank generates the same input and computes the same decomposition, drives only
// its own part and posts only its own messages (MpiTransport); rank 0 then compares the
// gathered accelerations with the same split run in one process (loopback transport): they must
// be equal bit for bit (the same pairs in the same order), with counterforces or without.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include "helpers.h"
#include "host_part.h"
#include "distributed/mpi_transport.h"

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

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  doctest::Context context(argc, argv);
  const int code = context.run();
  int worst = code;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
