// The operation-count model, bench output files, experiments (resume, [reduced] overrides, bad
// keys) and the reproduce command at a tiny scale.
#include <cstdlib>
#include <fstream>

#include "harness/model.h"
#include "harness/results.h"
#include "helpers.h"

using namespace nf;

namespace {
std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) rows.push_back(split_csv_line(line));
  return rows;
}
std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  REQUIRE(it != header.end());
  return static_cast<std::size_t>(it - header.begin());
}
}  // namespace

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

TEST_CASE("bench writes a results CSV with the context columns and appends on rerun") {
  test::TempDir dir;
  const std::string out = dir.file("r.csv");
  auto r = test::run_cli({"bench", "--kernel", "cpu-omp,cpu-omp-n3", "--dist", "uniform-exact", "--dim", "2", "--level",
                          "3", "--ppb", "4,8", "--reps", "3", "--warmup", "1", "--output", out});
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto rows = csv_rows(out);
  REQUIRE(rows.size() == 5);
  const auto& h = rows[0];
  for (const char* c : {"kernel", "dim", "level", "ppb", "n", "distribution", "precision", "softening", "reps", "median_ms",
                        "min_ms", "max_ms", "interactions_per_s", "gflops", "device", "compute_capability",
                        "sm_clock_mhz", "cuda_runtime", "cuda_driver", "git_commit", "timestamp"})
    column(h, c);
  CHECK(rows[1][column(h, "kernel")] == "cpu-omp");
  CHECK(rows[1][column(h, "n")] == "256");
  CHECK(rows[1][column(h, "reps")] == "3");
  // interactions = N(P-1) + B P^2 with B = 420 at level 3
  CHECK(rows[1][column(h, "interactions")] == std::to_string(256 * 3 + 420 * 16));
  CHECK(std::stod(rows[1][column(h, "min_ms")]) <= std::stod(rows[1][column(h, "median_ms")]));
  CHECK(std::stod(rows[1][column(h, "median_ms")]) <= std::stod(rows[1][column(h, "max_ms")]));
  r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--dim", "3", "--n", "500", "--level", "2",
                     "--reps", "1", "--output", out});
  REQUIRE(r.code == 0);
  CHECK(csv_rows(out).size() == 6);
  CHECK(test::run_cli({"bench", "--list"}).out.find("bpb-n3") != std::string::npos);
}

TEST_CASE("experiments: results under DIR/NAME/<device>.csv, resumable, [reduced] overrides, bad keys") {
  test::TempDir dir;
  const std::string ini = dir.file("tiny.ini");
  test::write_text(ini,
                   "description = tiny\nmode = bench\ndist = uniform-exact\ndim = 2\nlevel = 2\nppb = 2,3\n"
                   "kernel = cpu-serial,cpu-n3\nreps = 2\nwarmup = 0\n\n[reduced]\nppb = 4\n");
  auto r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res")});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto files = std::vector<std::filesystem::path>(std::filesystem::directory_iterator(dir.file("res/tiny")),
                                                        std::filesystem::directory_iterator());
  REQUIRE(files.size() == 1);
  const std::string out = files[0].string();
  CHECK(csv_rows(out).size() == 5);
  CHECK(r.err.find("[tiny 4/4]") != std::string::npos);  // progress: done/total
  CHECK(r.err.find("elapsed") != std::string::npos);

  // A rerun finds every row and measures nothing.
  r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res")});
  REQUIRE(r.code == 0);
  CHECK(csv_rows(out).size() == 5);
  CHECK(r.err.find("already in") != std::string::npos);

  // An interrupted sweep (rows missing) continues where it stopped.
  auto rows = csv_rows(out);
  std::string text;
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t c = 0; c < rows[i].size(); ++c) text += (c ? "," : "") + rows[i][c];
    text += "\n";
  }
  test::write_text(out, text);
  r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res")});
  REQUIRE(r.code == 0);
  rows = csv_rows(out);
  CHECK(rows.size() == 5);

  // [reduced] overrides the file; the command line overrides both.
  r = test::run_cli({"experiment", ini, "--results-dir", dir.file("red"), "--reduced", "--kernel", "cpu-omp"});
  REQUIRE(r.code == 0);
  const auto red = std::vector<std::filesystem::path>(std::filesystem::directory_iterator(dir.file("red/tiny")),
                                                      std::filesystem::directory_iterator());
  rows = csv_rows(red[0].string());
  REQUIRE(rows.size() == 2);
  CHECK(rows[1][column(rows[0], "ppb")] == "4");
  CHECK(rows[1][column(rows[0], "kernel")] == "cpu-omp");

  test::write_text(dir.file("bad.ini"), "mode = bench\nlevle = 3\n");
  r = test::run_cli({"experiment", dir.file("bad.ini")});
  CHECK(r.code == 2);
  CHECK(r.err.find("bad.ini") != std::string::npos);
  CHECK(r.err.find("levle") != std::string::npos);
}

TEST_CASE("reproduce without a GPU: reduced scale announced in one line, results and model written") {
  if (gpu::available()) return;  // with a GPU it runs the full scale: not a unit test
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("exp"));
  const char* names[] = {"table3", "depth", "ppb", "validation", "validation-large"};
  for (const char* n : names)
    test::write_text(dir.file(std::string("exp/") + n + ".ini"),
                     std::string("mode = ") + (std::string(n).rfind("validation", 0) == 0 ? "validate" : "bench") +
                         "\ndist = uniform-exact\ndim = 2\nlevel = 2\nppb = 3\nkernel = cpu-serial\nreps = 1\nwarmup = 0\n"
                         "[reduced]\nkernel = cpu-n3\n");
  const auto r = test::run_cli({"reproduce", "--experiments", dir.file("exp"), "--results", dir.file("res"), "--no-report"});
  INFO(r.out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("no CUDA GPU", 0) == 0);
  CHECK(r.out.find("reduced scale\n") != std::string::npos);
  for (const char* n : names) CHECK(std::filesystem::exists(dir.file(std::string("res/") + n)));
  CHECK(std::filesystem::exists(dir.file("res/model/model.csv")));
  const auto rows = csv_rows(std::filesystem::directory_iterator(dir.file("res/table3"))->path().string());
  CHECK(rows[1][column(rows[0], "kernel")] == "cpu-n3");
}
