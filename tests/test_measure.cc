// Measuring (measure/): the benchmark's warm-up rule; results files with their context columns,
// appended to, read when written by older versions (also before --gpus), rows replaced, files of
// another command refused.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "io/csv_file.h"
#include "measure/benchmark.h"
#include "measure/results.h"
#include "methods/registry.h"
#include "helpers.h"

using namespace nf;

using test::column;
using test::csv_rows;
using test::rows_after;

TEST_CASE("benchmark warm-up: with any warm-up run, at least kMinWarmupMs of them; none when asked for none") {
  const Particles p = test::make("uniform", 2, 40, 3);
  MethodSetup s;
  s.level = 2;
  s.domain = default_domain(p);
  const KernelInfo& k = find_kernel("cpu-serial");
  const auto time = [&](int warmup) {
    auto m = make_method(k, s, p);
    m->prepare(p);
    return time_method(*m, warmup, 1);
  };
  using clock = std::chrono::steady_clock;
  // One warm-up run of a kernel of microseconds: the floor keeps warming up for kMinWarmupMs.
  auto t0 = clock::now();
  const MethodTiming warm = time(1);
  const double with_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  CHECK(with_ms >= kMinWarmupMs);
  CHECK(warm.warmup == 1);  // the requested count, as the results file records it
  // No warm-up asked for: none done (a CPU point of minutes must not run once more). Its one
  // timed run of 40 particles takes far less than the floor.
  t0 = clock::now();
  const MethodTiming cold = time(0);
  const double without_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  CHECK(cold.reps == 1);
  CHECK(without_ms < with_ms);
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

TEST_CASE("results rows carry the machine's context; older files stay readable; rows can be replaced") {
  test::TempDir dir;
  const std::string out = dir.file("r.csv");
  auto r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "200", "--level", "2", "--reps", "1",
                          "--output", out});
  REQUIRE(r.code == 0);
  auto rows = csv_rows(out);
  REQUIRE(rows.size() == 2);
  for (const char* c : {"host_cpu", "cpu_clock_mhz", "cpu_cores", "memory_gib", "os", "compiler", "threads", "git_commit",
                        "timestamp", "device"}) {
    CAPTURE(c);
    CHECK_FALSE(rows[1][column(rows[0], c)].empty());
  }
  CHECK(rows[1][column(rows[0], "scale")].empty());  // a plain bench is neither full nor reduced scale
  CHECK(rows[1][column(rows[0], "compiler")].find_first_of("0123456789") != std::string::npos);

  // A file of an older version: fewer context columns, and one column this version does not write.
  const std::vector<std::string> old_header = {"kernel", "dim", "level", "ppb", "n", "distribution", "seed", "precision",
                                               "softening", "mask", "reps", "warmup", "median_ms", "min_ms", "max_ms",
                                               "interactions", "interactions_per_s", "gflops", "flops_per_interaction",
                                               "tree_ms", "device", "host_cpu", "threads", "git_commit", "timestamp",
                                               "retired"};
  std::string text;
  for (std::size_t c = 0; c < old_header.size(); ++c) text += (c ? "," : "") + old_header[c];
  text += "\ncpu-n3,2,2,12.5,200,uniform,1,float,1e-04,,3,1,1.5,1.4,1.6,100,1e5,0.1,15,0.1,Old CPU,Old CPU,4,abc,"
          "2020-01-01T00:00:00,x\n";
  test::write_text(out, text);
  {
    ResultsFile f(out, rows[0]);
    CHECK(f.rows().size() == 1);
    CHECK(f.columns().back() == "retired");  // kept, never dropped
    CHECK(f.contains({{"kernel", "cpu-n3"}, {"n", "200"}}));
  }
  rows = rows_after({"bench", "--kernel", "cpu-serial", "--dist", "uniform", "--n", "200", "--level", "2", "--reps", "1",
                     "--output", out},
                    out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[1][column(rows[0], "device")] == "Old CPU");
  CHECK(rows[1][column(rows[0], "os")].empty());
  CHECK(rows[1][column(rows[0], "retired")] == "x");
  CHECK(rows[2][column(rows[0], "kernel")] == "cpu-serial");
  CHECK_FALSE(rows[2][column(rows[0], "os")].empty());

  // A validate file of an older version (no `repeat` column, fewer context columns) takes new rows too.
  const std::string vold = dir.file("v-old.csv");
  test::write_text(vold,
                   "kernel,dim,level,ppb,n,distribution,seed,precision,softening,mask,reference,rel_l2,max_rel,momentum,"
                   "tolerance,status,device,compute_capability,cuda_runtime,cuda_driver,host_cpu,threads,git_commit,"
                   "timestamp\ncpu-n3,2,2,12.5,200,uniform,1,float,1e-04,,ref,1e-7,1e-6,1e-8,1e-05,PASS,Old,,,,Old,4,abc,"
                   "2020-01-01T00:00:00\n");
  rows = rows_after({"validate", "--kernel", "cpu-serial", "--dist", "uniform", "--n", "200", "--level", "2", "--output",
                     vold},
                    vold);
  REQUIRE(rows.size() == 3);
  CHECK(rows[1][column(rows[0], "rel_l2")] == "1e-7");
  CHECK(rows[2][column(rows[0], "status")] == "PASS");

  // A file of another command is refused, never rewritten.
  test::write_text(dir.file("v.csv"), "kernel,rel_l2\ncpu-n3,1e-7\n");
  r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "200", "--level", "2", "--reps", "1",
                     "--output", dir.file("v.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("has no column 'dim'") != std::string::npos);
  CHECK(test::read_text(dir.file("v.csv")) == "kernel,rel_l2\ncpu-n3,1e-7\n");

  // bench --remeasure replaces matching rows instead of appending a second one.
  r = test::run_cli({"bench", "--kernel", "cpu-serial", "--dist", "uniform", "--n", "200", "--level", "2", "--reps", "2",
                     "--output", out, "--remeasure"});
  REQUIRE(r.code == 0);
  rows = csv_rows(out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[2][column(rows[0], "reps")] == "2");
  ResultsFile f(out, rows[0]);
  CHECK(f.replace({{"kernel", "cpu-n3"}}, {{"kernel", "cpu-n3"}, {"n", "7"}}) == 1);
  CHECK(f.rows().size() == 2);
  CHECK(csv_rows(out)[2][column(rows[0], "n")] == "7");
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

TEST_CASE("two runs appending to one results file keep each other's rows") {
  // Each run had rewritten the file from the rows it read at its start: the other's rows were lost
  // (two experiments on one results folder at once).
  test::TempDir dir;
  const std::string path = dir.file("r.csv");
  const std::vector<std::string> columns = {"kernel", "level", "median_ms"};
  ResultsFile a(path, columns), b(path, columns);
  a.append({{"kernel", "cpu-serial"}, {"level", "3"}, {"median_ms", "1"}});
  b.append({{"kernel", "cpu-n3"}, {"level", "3"}, {"median_ms", "2"}});
  a.append({{"kernel", "cpu-serial"}, {"level", "4"}, {"median_ms", "3"}});
  CHECK(b.replace({{"kernel", "cpu-n3"}, {"level", "3"}}, {{"kernel", "cpu-n3"}, {"level", "3"}, {"median_ms", "4"}}) == 1);
  const auto rows = test::csv_rows(path);
  REQUIRE(rows.size() == 4);
  const std::size_t k = test::column(rows[0], "kernel"), ms = test::column(rows[0], "median_ms");
  CHECK(rows[1][k] == "cpu-serial");
  CHECK(rows[2][k] == "cpu-serial");
  CHECK(rows[3][k] == "cpu-n3");
  CHECK(rows[3][ms] == "4");
  CHECK(ResultsFile(path, columns).rows().size() == 3);
}
