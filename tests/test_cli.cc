// The operation-count model, bench output files and their context, experiments (resume,
// re-measuring, [reduced] and command-line overrides, bad keys), up-front refusals, --threads,
// --version, compare, and the reproduce command at a tiny scale.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "io/csv_file.h"
#include "core/numbers.h"
#include "core/version.h"
#include "measure/model.h"
#include "measure/results.h"
#include "helpers.h"

using namespace nf;

namespace {
std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) rows.push_back(split_csv_line(line));
  return rows;
}
// Runs a command that must succeed and returns the rows of the results file it wrote to.
std::vector<std::vector<std::string>> rows_after(const std::vector<std::string>& args, const std::string& results) {
  const auto r = test::run_cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return csv_rows(results);
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

TEST_CASE("experiments: results under DIR/NAME/<device>.csv, resumable, bad keys") {
  test::TempDir dir;
  const std::string ini = dir.file("tiny.ini");
  test::write_text(ini,
                   "description = tiny\nmode = bench\ndist = uniform-exact\ndim = 2\nlevel = 2\nppb = 2,3\n"
                   "kernel = cpu-serial,cpu-n3\nreps = 2\nwarmup = 0\n");
  auto r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res")});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto files = std::vector<std::filesystem::path>(std::filesystem::directory_iterator(dir.file("res/tiny")),
                                                        std::filesystem::directory_iterator());
  REQUIRE(files.size() == 1);
  const std::string out = files[0].string();
  auto rows = csv_rows(out);
  CHECK(rows.size() == 5);
  CHECK(rows[1][column(rows[0], "scale")] == "full");
  CHECK(r.err.find("[tiny 4/4]") != std::string::npos);  // progress: done/total
  CHECK(r.err.find("elapsed") != std::string::npos);

  // A rerun finds every row and measures nothing.
  r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res")});
  REQUIRE(r.code == 0);
  CHECK(csv_rows(out).size() == 5);
  CHECK(r.err.find("already in") != std::string::npos);

  // --remeasure measures the points the command line selects again and replaces their rows (the
  // replaced row moves to the end); the other rows stay as they were.
  rows = csv_rows(out);
  CHECK(rows[2][column(rows[0], "kernel")] == "cpu-n3");
  r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res"), "--remeasure", "--kernel", "cpu-n3", "--ppb",
                     "2"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("already in") == std::string::npos);
  CHECK(r.err.find("[tiny 1/1]") != std::string::npos);
  auto again = csv_rows(out);
  REQUIRE(again.size() == 5);
  CHECK(again[1] == rows[1]);
  CHECK(again[2] == rows[3]);
  CHECK(again[3] == rows[4]);
  CHECK(again[4][column(rows[0], "kernel")] == "cpu-n3");
  CHECK(again[4][column(rows[0], "ppb")] == "2");

  // An interrupted sweep (rows missing) continues where it stopped.
  rows = csv_rows(out);
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

  test::write_text(dir.file("bad.ini"), "mode = bench\nlevle = 3\n");
  r = test::run_cli({"experiment", dir.file("bad.ini")});
  CHECK(r.code == 2);
  CHECK(r.err.find("bad.ini") != std::string::npos);
  CHECK(r.err.find("levle") != std::string::npos);
  // --reduced needs a [reduced] section.
  r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res2"), "--reduced"});
  CHECK(r.code == 2);
  CHECK(r.err.find("has no [reduced] section") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("res2")));
}

TEST_CASE("experiments: the command line replaces the file's keys, [reduced] ones included") {
  test::TempDir dir;
  const std::string ini = dir.file("tiny.ini");
  test::write_text(ini,
                   "description = tiny\nmode = bench\ndist = uniform-exact\ndim = 2\nlevel = 2\nppb = 2,3\n"
                   "kernel = cpu-serial,cpu-n3\nreps = 2\nwarmup = 0\n\n[reduced]\nppb = 4\nkernel = cpu-omp\nlevel = 1\n");
  // --kernel, --ppb and --level are keys of both sections: the command line wins over both.
  auto r = test::run_cli({"experiment", ini, "--results-dir", dir.file("red"), "--reduced", "--kernel", "cpu-n3",
                          "--ppb", "5", "--level", "2", "--reps", "1"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto rows = csv_rows(std::filesystem::directory_iterator(dir.file("red/tiny"))->path().string());
  REQUIRE(rows.size() == 2);
  CHECK(rows[1][column(rows[0], "kernel")] == "cpu-n3");
  CHECK(rows[1][column(rows[0], "ppb")] == "5");
  CHECK(rows[1][column(rows[0], "level")] == "2");
  CHECK(rows[1][column(rows[0], "reps")] == "1");
  CHECK(rows[1][column(rows[0], "scale")] == "reduced");
  // [reduced] keys the command line leaves alone still apply (the same option in --key=value form).
  r = test::run_cli({"experiment", ini, "--results-dir", dir.file("red2"), "--reduced", "--kernel=cpu-n3"});
  REQUIRE(r.code == 0);
  rows = csv_rows(std::filesystem::directory_iterator(dir.file("red2/tiny"))->path().string());
  REQUIRE(rows.size() == 2);
  CHECK(rows[1][column(rows[0], "ppb")] == "4");
  CHECK(rows[1][column(rows[0], "level")] == "1");

  // Without a usable GPU the [reduced] section applies on its own, and one line says so.
  if (gpu::available()) {
    MESSAGE("skipped the automatic [reduced] check: this machine has a GPU");
  } else {
    r = test::run_cli({"experiment", ini, "--results-dir", dir.file("auto")});
    REQUIRE(r.code == 0);
    CHECK(r.out.rfind("no CUDA GPU (", 0) == 0);
    CHECK(r.out.find("tiny runs its [reduced] section\n") != std::string::npos);
    rows = csv_rows(std::filesystem::directory_iterator(dir.file("auto/tiny"))->path().string());
    REQUIRE(rows.size() == 2);
    CHECK(rows[1][column(rows[0], "kernel")] == "cpu-omp");
    CHECK(rows[1][column(rows[0], "scale")] == "reduced");
  }

  r = test::run_cli({"experiment", "--help"});
  CHECK(r.code == 0);
  for (const char* opt : {"--reduced", "--results-dir", "--kernel", "--level", "--ppb", "--reps", "--remeasure",
                          "--threads", "--mode", "[reduced]"})
    CHECK_MESSAGE(r.out.find(opt) != std::string::npos, opt);
  CHECK(test::run_cli({"experiment", ini, "--help"}).out == r.out);
}

TEST_CASE("GPU kernels on a machine without a GPU are refused before any work") {
  if (gpu::available()) {
    MESSAGE("skipped: this machine has a GPU, so GPU kernels run");
    return;
  }
  test::TempDir dir;
  for (const char* command : {"validate", "bench"}) {
    CAPTURE(command);
    const auto r = test::run_cli({command, "--kernel", "cpu-serial,bpb,ppt", "--dist", "uniform", "--n", "300",
                                  "--level", "2", "--output", dir.file("r.csv")});
    CHECK(r.code == 2);
    CHECK(r.err.find("GPU kernels bpb, ppt need a CUDA GPU") != std::string::npos);
    CHECK(r.err.find("[1/") == std::string::npos);  // no progress line: nothing ran
    CHECK_FALSE(std::filesystem::exists(dir.file("r.csv")));
  }
  // An experiment whose [reduced] section still names a GPU kernel, or without [reduced] at all.
  test::write_text(dir.file("gpu.ini"), "mode = bench\ndist = uniform\nn = 300\nlevel = 2\nkernel = cpu-serial,bpb\n");
  test::write_text(dir.file("gpu2.ini"),
                   "mode = bench\ndist = uniform\nn = 300\nlevel = 2\nkernel = bpb\n[reduced]\nkernel = cpu-n3,ppt\n");
  for (const char* ini : {"gpu.ini", "gpu2.ini"}) {
    const auto r = test::run_cli({"experiment", dir.file(ini), "--results-dir", dir.file("res")});
    CHECK(r.code == 2);
    CHECK(r.err.find("needs a CUDA GPU") != std::string::npos);
    CHECK(r.err.find("[") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("res")));
  }
  auto r = test::run_cli({"bench", "--tree", "--dist", "uniform", "--n", "300", "--level", "2"});
  CHECK(r.code == 2);
  CHECK(r.err.find("needs a CUDA GPU") != std::string::npos);

  // reproduce checks every experiment file before the first one runs: a GPU kernel in the last
  // file's [reduced] section stops it before table3 measures anything.
  std::filesystem::create_directories(dir.file("exp"));
  for (const std::string& n : cli::reproduce_experiments())
    test::write_text(dir.file("exp/" + n + ".ini"),
                     std::string("mode = bench\ndist = uniform-exact\ndim = 2\nlevel = 2\nppb = 3\nreps = 1\n"
                                 "[reduced]\nkernel = ") + (n == cli::reproduce_experiments().back() ? "cpu-n3,bpb\n" : "cpu-n3\n"));
  r = test::run_cli({"reproduce", "--experiments", dir.file("exp"), "--results", dir.file("rep"), "--no-report"});
  CHECK(r.code == 2);
  CHECK(r.err.find("GPU kernel bpb needs a CUDA GPU") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("rep")));
}

TEST_CASE("accepted nonsense is refused: unknown experiments, missing folders, contradictory options") {
  test::TempDir dir;
  auto r = test::run_cli({"reproduce", "--only", "table3,nosuchexperiment", "--results", dir.file("res"), "--no-report"});
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown experiment 'nosuchexperiment'") != std::string::npos);
  std::string names;
  for (const std::string& n : cli::reproduce_experiments()) names += (names.empty() ? "" : ", ") + n;
  CHECK(r.err.find(names) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("res")));

  // A results file in a folder that does not exist: refused before the first measurement.
  const std::string missing = dir.file("nope/r.csv");
  r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "100", "--level", "1", "--output", missing});
  CHECK(r.code == 2);
  CHECK(r.err.find(missing + ": cannot write: folder") != std::string::npos);
  CHECK(r.err.find("[1/") == std::string::npos);
  r = test::run_cli({"forces", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "100", "--level", "1", "--output", missing});
  CHECK(r.code == 2);
  CHECK(r.err.find(missing + ": cannot write") != std::string::npos);

  r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "100", "--ppb", "3", "--level", "1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--n and --ppb exclude each other") != std::string::npos);
  r = test::run_cli({"validate", "--kernel", "cpu-n3", "--dist", "uniform-exact", "--ppb", "-1", "--level", "1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--ppb: -1 is not a valid value") != std::string::npos);
  r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "100", "--level", "1", "--threads", "-3"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--threads: -3 is not a valid value") != std::string::npos);
}

TEST_CASE("forces: all-pairs over every pair needs no --level; the near field does") {
  test::TempDir dir;
  test::write_text(dir.file("p.csv"), "x,y,m\n0,0,1\n0.5,0.25,2\n1,1,1\n");
  auto r = test::run_cli({"forces", "--input", dir.file("p.csv"), "--kernel", "cpu-allpairs", "--mask", "all", "--output",
                          dir.file("a.csv")});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(std::filesystem::exists(dir.file("a.csv")));
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--kernel", "cpu-allpairs", "--mask", "near"}, {"--kernel", "cpu-n3"}}) {
    std::vector<std::string> args = {"forces", "--input", dir.file("p.csv"), "--output", dir.file("b.csv")};
    args.insert(args.end(), extra.begin(), extra.end());
    r = test::run_cli(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("--level is required") != std::string::npos);
  }
}

TEST_CASE("--version names the project version and the git commit") {
  const auto r = test::run_cli({"--version"});
  CHECK(r.code == 0);
  CHECK(r.out.rfind(std::string("nearfield ") + project_version() + ", git commit " + git_commit(), 0) == 0);
  CHECK(std::string(project_version()).find('.') != std::string::npos);
  CHECK(test::run_cli({"--help"}).out.find("--version") != std::string::npos);
}

TEST_CASE("--threads sets the OpenMP kernels' threads; the threads column says what each kernel used") {
  test::TempDir dir;
  const std::string out = dir.file("r.csv");
  const int default_threads = omp_get_max_threads();
  const std::string t = default_threads == 3 ? "2" : "3";  // not the default, so it shows
  auto r = test::run_cli({"bench", "--kernel", "cpu-serial,cpu-omp,cpu-omp-n3", "--dist", "uniform", "--n", "500",
                          "--level", "2", "--reps", "1", "--warmup", "0", "--threads", t, "--output", out});
  INFO(r.err);
  REQUIRE(r.code == 0);
  auto rows = csv_rows(out);
  REQUIRE(rows.size() == 4);
  const std::size_t threads = column(rows[0], "threads");
  CHECK(rows[1][threads] == "1");  // cpu-serial is one thread whatever --threads says
  CHECK(rows[2][threads] == t);
  CHECK(rows[3][threads] == t);
  // Without --threads: OpenMP's default again (not the last command's value).
  r = test::run_cli({"bench", "--kernel", "cpu-omp", "--dist", "uniform", "--n", "500", "--level", "2", "--reps", "1",
                     "--output", out});
  REQUIRE(r.code == 0);
  rows = csv_rows(out);
  CHECK(rows[4][threads] == std::to_string(default_threads));
  for (const char* command : {"forces", "validate", "bench", "experiment", "reproduce"})
    CHECK_MESSAGE(test::run_cli({command, "--help"}).out.find("--threads") != std::string::npos, command);
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

TEST_CASE("compare: the relative difference of two acceleration files, rows matched by id") {
  test::TempDir dir;
  REQUIRE(test::run_cli({"generate", "--dist", "clusters", "--dim", "2", "--n", "400", "--seed", "4", "--mass", "random",
                         "--output", dir.file("p.csv")})
              .code == 0);
  auto forces = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args = {"forces", "--input", dir.file("p.csv"), "--level", "3", "--output", dir.file(out)};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_cli(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
  };
  forces("ref.csv", {"--kernel", "cpu-allpairs", "--mask", "near", "--precision", "double"});
  forces("rounded.csv", {"--kernel", "cpu-allpairs", "--mask", "near", "--precision", "double", "--round-inputs"});
  forces("n3.csv", {"--kernel", "cpu-n3", "--precision", "double"});
  auto compare = [&](const std::string& a, const std::string& b) {
    const auto r = test::run_cli({"compare", "--reference", dir.file(a), "--test", dir.file(b)});
    INFO(r.err);
    REQUIRE(r.code == 0);
    std::map<std::string, double> v;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) v[line.substr(0, line.find(':'))] = std::stod(line.substr(line.find(':') + 1));
    return v;
  };
  auto same = compare("ref.csv", "ref.csv");
  CHECK(same["particles"] == 400);
  CHECK(same["rel_l2"] == 0.0);
  CHECK(compare("ref.csv", "n3.csv")["rel_l2"] < 1e-12);  // the tree kernel and the mask agree
  auto rounding = compare("ref.csv", "rounded.csv");  // float32 inputs alone move the forces
  CHECK(rounding["rel_l2"] > 1e-9);
  CHECK(rounding["rel_l2"] < 1e-3);
  CHECK(rounding["max_rel"] >= rounding["rel_l2"] * 0.1);
  // Rows in another order still match by id; a missing id is an error naming it.
  const Accelerations a = read_accelerations_csv(dir.file("ref.csv"));
  std::string text = "id,ax,ay\n";
  for (std::size_t i = a.id.size(); i-- > 0;)
    text += std::to_string(a.id[i]) + "," + format_double(a.acc[2 * i]) + "," + format_double(a.acc[2 * i + 1]) + "\n";
  test::write_text(dir.file("reversed.csv"), text);
  CHECK(compare("ref.csv", "reversed.csv")["rel_l2"] == 0.0);
  test::write_text(dir.file("short.csv"), "id,ax,ay\n0,1,1\n");
  const auto r = test::run_cli({"compare", "--reference", dir.file("ref.csv"), "--test", dir.file("short.csv")});
  CHECK(r.code == 2);
  CHECK(test::run_cli({"forces", "--input", dir.file("p.csv"), "--level", "3", "--kernel", "cpu-n3", "--round-inputs",
                       "--output", dir.file("x.csv")})
            .code == 2);
}

TEST_CASE("reproduce at a tiny reduced scale: results and model written (the announcement needs a machine without a GPU)") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("exp"));
  for (const std::string& n : cli::reproduce_experiments())
    test::write_text(dir.file("exp/" + n + ".ini"),
                     std::string("mode = ") + (n.rfind("validation", 0) == 0 ? "validate" : "bench") +
                         "\ndist = uniform-exact\ndim = 2\nlevel = 2\nppb = 3\nkernel = cpu-serial\nreps = 1\nwarmup = 0\n"
                         "[reduced]\nkernel = cpu-n3,cpu-omp\n");
  const std::string threads = omp_get_max_threads() == 3 ? "2" : "3";  // not the default, so it shows
  std::vector<std::string> args = {"reproduce", "--experiments", dir.file("exp"), "--results", dir.file("res"),
                                   "--no-report", "--threads", threads};
  // With a GPU the full scale would run: ask for the reduced one, which is what is checked here.
  if (gpu::available()) args.push_back("--reduced");
  const auto r = test::run_cli(args);
  INFO(r.out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  if (gpu::available()) {
    MESSAGE("skipped the one-line no-GPU announcement check: this machine has a GPU");
  } else {
    CHECK(r.out.rfind("no CUDA GPU", 0) == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') >= 1);
  }
  CHECK(r.out.find("reduced scale\n") != std::string::npos);
  for (const std::string& n : cli::reproduce_experiments()) CHECK(std::filesystem::exists(dir.file("res/" + n)));
  CHECK(std::filesystem::exists(dir.file("res/model/model.csv")));
  const auto rows = csv_rows(std::filesystem::directory_iterator(dir.file("res/table3"))->path().string());
  REQUIRE(rows.size() == 3);
  CHECK(rows[1][column(rows[0], "kernel")] == "cpu-n3");
  CHECK(rows[1][column(rows[0], "scale")] == "reduced");
  CHECK(rows[2][column(rows[0], "kernel")] == "cpu-omp");
  CHECK(rows[2][column(rows[0], "threads")] == threads);  // reproduce --threads reaches the experiments
}
