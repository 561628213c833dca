// The command line (cli/): forces (rows in input order with the input's ids, --level, clean
// failures, the estimate of a long CPU run), validate's defaults, compare, --version and --threads; accepted nonsense and kernels that cannot run
// refused before any work. (Experiments and reproduce: test_cli_experiment.cc.)
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "cli/long_run.h"
#include "core/numbers.h"
#include "core/version.h"
#include "io/csv_file.h"
#include "measure/results.h"
#include "tree/box_set.h"
#include "helpers.h"

using namespace nf;

using test::column;
using test::csv_rows;

TEST_CASE("kernel lists, experiments and reproduce that cannot run are refused before any work") {
  test::TempDir dir;
  // Everywhere: a name that is no kernel, in a command's list, in an experiment file's either
  // section, or in the last experiment file of reproduce, stops everything before the first point.
  for (const char* command : {"validate", "bench"}) {
    CAPTURE(command);
    const auto r = test::run_cli({command, "--kernel", "cpu-serial,nosuch", "--dist", "uniform", "--n", "300",
                                  "--level", "2", "--output", dir.file("r.csv")});
    CHECK(r.code == 2);
    CHECK(r.err.find("unknown kernel 'nosuch'") != std::string::npos);
    CHECK(r.err.find("[1/") == std::string::npos);  // no progress line: nothing ran
    CHECK_FALSE(std::filesystem::exists(dir.file("r.csv")));
  }
  const std::string head = "mode = bench\ndist = uniform\nn = 300\nlevel = 2\n";
  test::write_text(dir.file("bad.ini"), head + "kernel = cpu-serial,nosuch\n");
  test::write_text(dir.file("bad2.ini"), head + "kernel = cpu-serial\n[reduced]\nkernel = cpu-n3,nosuch\n");
  // (The [reduced] section is the one run with --reduced, and without a GPU also without it.)
  for (const std::vector<std::string>& extra : {std::vector<std::string>{dir.file("bad.ini")},
                                                std::vector<std::string>{dir.file("bad2.ini"), "--reduced"}}) {
    CAPTURE(extra[0]);
    std::vector<std::string> args = {"experiment", "--results-dir", dir.file("res")};
    args.insert(args.begin() + 1, extra.begin(), extra.end());
    const auto r = test::run_cli(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("unknown kernel 'nosuch'") != std::string::npos);
    CHECK(r.err.find("[") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("res")));
  }
  // reproduce checks every experiment file before the first one runs: a bad kernel in the last
  // file's [reduced] section stops it before table3 measures anything.
  const auto experiments = [&](const std::string& folder, const std::string& last_kernels) {
    std::filesystem::create_directories(dir.file(folder));
    for (const std::string& n : cli::reproduce_experiments())
      test::write_text(dir.file(folder + "/" + n + ".ini"),
                       std::string("mode = bench\ndist = uniform-exact\ndim = 2\nlevel = 2\nppb = 3\nreps = 1\n"
                                   "[reduced]\nkernel = ") +
                           (n == cli::reproduce_experiments().back() ? last_kernels : "cpu-n3") + "\n");
  };
  experiments("exp", "cpu-n3,nosuch");
  auto r = test::run_cli({"reproduce", "--experiments", dir.file("exp"), "--results", dir.file("rep"), "--no-report",
                          "--reduced"});
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown kernel 'nosuch'") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("rep")));

  // Only without a GPU: GPU kernels are refused with the reason, the same way.
  if (gpu::available()) {
    MESSAGE("skipped the refusal of GPU kernels without a GPU: this machine has one, so they run");
    return;
  }
  for (const char* command : {"validate", "bench"}) {
    CAPTURE(command);
    r = test::run_cli({command, "--kernel", "cpu-serial,bpb,ppt", "--dist", "uniform", "--n", "300", "--level", "2",
                       "--output", dir.file("r.csv")});
    CHECK(r.code == 2);
    CHECK(r.err.find("GPU kernels bpb, ppt need a CUDA GPU") != std::string::npos);
    CHECK(r.err.find("[1/") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("r.csv")));
  }
  // An experiment whose [reduced] section still names a GPU kernel, or without [reduced] at all.
  test::write_text(dir.file("gpu.ini"), "mode = bench\ndist = uniform\nn = 300\nlevel = 2\nkernel = cpu-serial,bpb\n");
  test::write_text(dir.file("gpu2.ini"),
                   "mode = bench\ndist = uniform\nn = 300\nlevel = 2\nkernel = bpb\n[reduced]\nkernel = cpu-n3,ppt\n");
  for (const char* ini : {"gpu.ini", "gpu2.ini"}) {
    r = test::run_cli({"experiment", dir.file(ini), "--results-dir", dir.file("res")});
    CHECK(r.code == 2);
    CHECK(r.err.find("needs a CUDA GPU") != std::string::npos);
    CHECK(r.err.find("[") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("res")));
  }
  r = test::run_cli({"bench", "--tree", "--dist", "uniform", "--n", "300", "--level", "2"});
  CHECK(r.code == 2);
  CHECK(r.err.find("needs a CUDA GPU") != std::string::npos);
  experiments("exp-gpu", "cpu-n3,bpb");
  r = test::run_cli({"reproduce", "--experiments", dir.file("exp-gpu"), "--results", dir.file("rep"), "--no-report"});
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
  // Values that had wrapped around: a level of 2^32 ran as level 0, a leaf size of -1 as 2^32 - 1.
  const std::vector<std::vector<std::string>> deep = {
      {"bench", "--kernel", "cpu-n3"},
      {"validate", "--kernel", "cpu-n3"},
      {"forces", "--kernel", "cpu-n3", "--output", dir.file("f.csv")},
      {"tree"}};
  for (std::vector<std::string> args : deep) {
    CAPTURE(args[0]);
    for (const char* a : {"--dist", "uniform", "--n", "100", "--level", "4294967296"}) args.push_back(a);
    r = test::run_cli(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("--level: 4294967296 is not a valid value (at most 64)") != std::string::npos);
  }
  r = test::run_cli({"validate", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "100", "--level", "1",
                     "--cpu-reference-limit", "-1"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--cpu-reference-limit: -1 is not a valid value") != std::string::npos);
  for (const char* reps : {"0", "-5"}) {  // 0 timed runs had written a row of zeros; -5 had run as -1
    r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "100", "--level", "1", "--cpu-reps", reps});
    CHECK(r.code == 2);
    CHECK(r.err.find(std::string("--cpu-reps: ") + reps + " is not a valid value") != std::string::npos);
  }
  // Options no kernel of the sweep takes had been dropped without a word.
  r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "100", "--level", "1", "--order", "5"});
  CHECK(r.code == 2);
  CHECK(r.err.find("none of the kernels has one") != std::string::npos);
  r = test::run_cli({"bench", "--kernel", "cpu-n3", "--dist", "uniform", "--n", "100", "--level", "1", "--mask", "near"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--mask near applies to all-pairs kernels; none of the kernels is one") != std::string::npos);
  // A list with nothing in it had run no point and reported "all kernels PASS", exit 0.
  for (const char* option : {"--level", "--dist"}) {
    CAPTURE(option);
    r = std::string(option) == "--level"
            ? test::run_cli({"validate", "--kernel", "cpu-n3", "--n", "100", "--level", ","})
            : test::run_cli({"validate", "--kernel", "cpu-n3", "--n", "100", "--level", "1", option, ","});
    CHECK(r.code == 2);
    CHECK(r.err.find(std::string(option) + ": no value in ','") != std::string::npos);
  }
  for (const char* size : {"-1", "4294967296"}) {
    r = test::run_cli({"validate", "--kernel", "cpu-fmm-adaptive", "--dist", "uniform", "--n", "100", "--leaf-size", size});
    CHECK(r.code == 2);
    CHECK(r.err.find(std::string("--leaf-size: ") + size + " is not a valid value") != std::string::npos);
  }
}

TEST_CASE("forces writes one row per particle, in input order, with the input's ids") {
  test::TempDir dir;
  test::write_text(dir.file("p.csv"), "id,x,y,m\n70,0,0,1\n-3,1,0,2\n5,0.5,1,1\n");
  auto r = test::run_cli({"forces", "--input", dir.file("p.csv"), "--level", "1", "--kernel", "cpu-serial", "--precision",
                          "double", "--softening", "0", "--output", dir.file("a.csv")});
  REQUIRE(r.code == 0);
  const std::string text = test::read_text(dir.file("a.csv"));
  CHECK(text.rfind("id,ax,ay\n70,", 0) == 0);
  CHECK(text.find("\n-3,") != std::string::npos);
  CHECK(text.find("\n5,") != std::string::npos);
  // particle 70 at the origin: pulled towards (1,0) by mass 2 and towards (0.5,1) by mass 1
  const double ax = 2.0 + 0.5 / std::pow(1.25, 1.5), ay = 1.0 / std::pow(1.25, 1.5);
  const auto row = text.substr(text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n') - 1);
  double got_ax = 0, got_ay = 0;
  REQUIRE(nf::parse_double(row.substr(3, row.find(',', 3) - 3), got_ax));
  REQUIRE(nf::parse_double(row.substr(row.find(',', 3) + 1), got_ay));
  CHECK(got_ax == doctest::Approx(ax).epsilon(1e-14));
  CHECK(got_ay == doctest::Approx(ay).epsilon(1e-14));

  // Without ids: 0-based row numbers.
  test::write_text(dir.file("q.csv"), "x,y,z,m\n0,0,0,1\n1,1,1,1\n");
  r = test::run_cli({"forces", "--input", dir.file("q.csv"), "--level", "2", "--kernel", "cpu-allpairs", "--output",
                     dir.file("b.csv")});
  REQUIRE(r.code == 0);
  const std::string b = test::read_text(dir.file("b.csv"));
  CHECK(b.rfind("id,ax,ay,az\n0,", 0) == 0);
  CHECK(b.find("\n1,") != std::string::npos);
}

TEST_CASE("forces: bad input or a GPU kernel without a GPU fail cleanly and write nothing") {
  test::TempDir dir;
  test::write_text(dir.file("bad.csv"), "x,y,m\n0,0,1\n1,zz,1\n");
  auto r = test::run_cli({"forces", "--input", dir.file("bad.csv"), "--level", "1", "--kernel", "cpu-serial", "--output",
                          dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("bad.csv:3") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("a.csv")));
  r = test::run_cli({"forces", "--input", dir.file("bad.csv"), "--level", "1", "--kernel", "warp-drive", "--output",
                     dir.file("a.csv")});
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown kernel 'warp-drive'") != std::string::npos);
  if (gpu::available()) {
    MESSAGE("skipped the refusal of a GPU kernel without a GPU: this machine has one");
  } else {
    test::write_text(dir.file("ok.csv"), "x,y,m\n0,0,1\n1,1,1\n");
    r = test::run_cli({"forces", "--input", dir.file("ok.csv"), "--level", "1", "--kernel", "bpb", "--output",
                       dir.file("a.csv")});
    CHECK(r.code == 2);
    CHECK(r.err.find("needs a CUDA GPU") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(dir.file("a.csv")));
  }
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

TEST_CASE("validate --kernel NAME alone: a generated uniform 2D input and --level auto, both said") {
  auto r = test::run_cli({"validate", "--kernel", "cpu-n3"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.err.find("no input given: a generated uniform 2D set of 10000 particles") != std::string::npos);
  CHECK(r.out.find("level auto: ") != std::string::npos);
  CHECK(r.out.find("all kernels PASS") != std::string::npos);
  CHECK(test::run_cli({"validate", "--help"}).out.find("Defaults:") != std::string::npos);
  // --ppb defines the input with its level: still required there.
  r = test::run_cli({"validate", "--kernel", "cpu-n3", "--dist", "uniform-exact", "--ppb", "4"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--level K is required with --ppb") != std::string::npos);
}

TEST_CASE("long CPU runs: the estimate counts what the kernel evaluates; the meter says it and the progress") {
  const Particles p = test::make("uniform", 2, 2000, 3);
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(p);
  const auto all = cli::estimate_cpu_run(find_kernel("cpu-allpairs"), s, p);
  REQUIRE(all);
  CHECK(all->interactions == 2000.0 * 2000.0);
  const auto near = cli::estimate_cpu_run(find_kernel("cpu-serial"), s, p);
  REQUIRE(near);
  CHECK(near->interactions == double(near_field_interactions(count_boxes(p, 3, *s.domain))));
  CHECK(near->threads == 1);
  CHECK(near->seconds() > 0);
  CHECK_FALSE(cli::estimate_cpu_run(find_kernel("cpu-fmm"), s, p));
  std::ostringstream err;
  {
    cli::LongRun run(err, "cpu-allpairs on 2000 particles", *all, "; a hint");
    const auto progress = run.progress();
    progress(0.25);
    progress(1.0);
  }
  const std::string text = err.str();
  CHECK(text.find("cpu-allpairs on 2000 particles: 4e+06 interactions at about") != std::string::npos);
  CHECK(text.find("a conservative rate): about ") != std::string::npos);
  CHECK(text.find("; a hint\n") != std::string::npos);
  CHECK(text.find("  cpu-allpairs on 2000 particles: 100.0% done, elapsed ") != std::string::npos);
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
