// The operation-count model of Shan & Lei's Tables I and II (measure/model.h) and the model
// command that prints it.
#include "measure/model.h"
#include "helpers.h"

using namespace nf;

TEST_CASE("operation-count model: Table I sums to the paper's Table II symbolic rows") {
  for (int dim : {2, 3})
    for (int level : {1, 4, 7})
      for (std::uint64_t P : {1, 8, 64, 512}) {
        if (dim == 3 && level == 7) continue;
        const OperationModel m = operation_model(dim, level, P);
        const double N = static_cast<double>(m.n), B = static_cast<double>(m.links), p = static_cast<double>(P);
        CHECK(m.bpb.pairs() == static_cast<double>(cp_bpb(dim, level, P)));
        CHECK(m.bpb_n3.pairs() == static_cast<double>(cp_bpb_n3(dim, level, P)));
        CHECK(m.bpb.pairs() == N * (p - 1) + B * p * p);
        CHECK(m.change_computation() == -(N * (p - 1) / 2 + B * p * p / 2));
        CHECK(m.change_register() == -(dim * (N * (p - 1) + B * p * p) / 2));
        CHECK(m.change_global() == dim * N - B * p / 2);  // 2N - BP/2 in 2D, as printed
      }
  // 2D level 7: the printed Table II agrees with Table I except for shared memory.
  for (std::uint64_t P : {8, 64, 512}) {
    for (const PrintedTable2Row& r : printed_table2(P)) {
      CAPTURE(r.quantity);
      CHECK(r.matches == (r.quantity != "shared"));
    }
    const OperationModel m = operation_model(2, 7, P);
    CHECK(m.n == 16384 * P);
    CHECK(m.links == 129540u);
    const double p = static_cast<double>(P);
    CHECK(-m.change_shared() == p * (72962 * p - 138498));
    CHECK(-m.change_global() == 32002 * p);
  }
  const auto r = test::run_cli({"model", "--level", "7", "--ppb", "8"});
  CHECK(r.code == 0);
  CHECK(r.out.find("cp_bpb: 9208064\n") != std::string::npos);  // 16384*8*7 + 129540*64
  CHECK(r.out.find("paper_table2.shared.matches: no\n") != std::string::npos);
  CHECK(r.out.find("bpb.neighbor.SR: 24871680\n") != std::string::npos);  // 3 B P^2
  CHECK(test::run_cli({"model", "--level", "20", "--ppb", "8"}).code == 2);
}
