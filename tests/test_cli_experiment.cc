// Experiments and reproduce (cli/experiment.h, cli/cmd_reproduce.cc): results under
// DIR/NAME/<device>.csv, resumed and re-measured, bad keys, [reduced] sections and command-line
// overrides, and the whole reproduce command at a tiny reduced scale.
#include <omp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "io/csv_file.h"
#include "measure/results.h"
#include "helpers.h"

using namespace nf;

using test::column;
using test::csv_rows;

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
  // Each skip names its point, and the table still shows every point, from the recorded rows.
  CHECK(r.err.find("cpu-n3 float 2D uniform-exact level 2 N 48 P 3: already in") != std::string::npos);
  CHECK(r.out.find("cpu-serial*") != std::string::npos);
  CHECK(r.out.find("4 rows measured earlier") != std::string::npos);
  CHECK(r.err.find("this run: 2D uniform-exact, kernels cpu-serial,cpu-n3, level 2, P = 2,3, float") != std::string::npos);

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

TEST_CASE("reproduce at a tiny reduced scale: results and model written (the announcement needs a machine without a GPU)") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("exp"));
  for (const std::string& n : cli::reproduce_experiments())
    test::write_text(dir.file("exp/" + n + ".ini"),
                     std::string("mode = ") + (n.rfind("validation", 0) == 0 ? "validate" : "bench") +
                         "\ndist = uniform-exact\ndim = 2\nlevel = 2\nppb = 3\nkernel = cpu-serial\n" +
                         (n.rfind("validation", 0) == 0 ? "" : "reps = 1\nwarmup = 0\n") +  // bench keys only
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
    CHECK(r.out.find("reduced scale\n") != std::string::npos);
  }
  for (const std::string& n : cli::reproduce_experiments()) CHECK(std::filesystem::exists(dir.file("res/" + n)));
  CHECK(std::filesystem::exists(dir.file("res/model/model.csv")));
  const auto rows = csv_rows(std::filesystem::directory_iterator(dir.file("res/table3"))->path().string());
  REQUIRE(rows.size() == 3);
  CHECK(rows[1][column(rows[0], "kernel")] == "cpu-n3");
  CHECK(rows[1][column(rows[0], "scale")] == "reduced");
  CHECK(rows[2][column(rows[0], "kernel")] == "cpu-omp");
  CHECK(rows[2][column(rows[0], "threads")] == threads);  // reproduce --threads reaches the experiments
}

// Inputs found by fuzzing (fuzz/fuzz_experiment.cc, docs/design.md §9), refused naming the file.
TEST_CASE("experiments: a line that is no key = value names the file (found by fuzzing)") {
  test::TempDir dir;
  const std::string ini = dir.file("broken.ini");
  // A section not closed, a line without '=', a key given twice: each named with its line (the
  // parser's own messages had named none).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"mode = bench\nkernel = cpu-serial\nlevel = 3\n[reduced\n", ":4: a section header without its ']'"},
      {"mode = bench\n# a comment\njust some words\n", ":3: not a 'key = value' line: just some words"},
      {"mode = bench\nn = 300\n[reduced]\nn = 10\n\nn = 300\n", ":6: 'reduced.n' is given twice (first on line 4)"}};
  for (const auto& c : cases) {
    test::write_text(ini, c.first);
    const auto r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res")});
    CHECK(r.code == 2);
    CHECK(r.err.find(ini + c.second) != std::string::npos);
    CHECK(r.err.find("--help") == std::string::npos);  // not a command-line mistake
    CHECK_FALSE(std::filesystem::exists(dir.file("res")));
  }
}

TEST_CASE("experiments: a key or value holding a %word% is refused, not a hang (found by fuzzing)") {
  // program_options' error messages loop forever on such text (an unknown key in [reduced] here).
  test::TempDir dir;
  const std::string ini = dir.file("percent.ini");
  for (const char* text : {"mode = bench\nlevel = 3\n[reduced]\n%canonical_option%n = 4999\n",
                           "mode = bench\nlevel = 3\n\nreps = %value%\n", "mode = bench\nlevel = 3\n\nx %invalid_line%\n"}) {
    test::write_text(ini, text);
    const auto r = test::run_cli({"experiment", ini, "--reduced", "--results-dir", dir.file("res")});
    CHECK(r.code == 2);
    CHECK(r.err.find(ini + ":4: ") != std::string::npos);
    CHECK(r.err.find("percent signs") != std::string::npos);
  }
  // A percent sign alone is an ordinary character.
  test::write_text(ini, "description = within 15% of the best\nmode = bench\nlevel = 2\nppb = 2\n"
                        "kernel = cpu-serial\nreps = 1\nwarmup = 0\n");
  const auto r = test::run_cli({"experiment", ini, "--results-dir", dir.file("res")});
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("--resume takes a recorded row only for the same measurement: domain, threads, near kernel, generator") {
  // These had been left out of a point's key: a --domain run was "already in" the file as the
  // default-domain row, and so were other threads, another near kernel, another generator.
  test::TempDir dir;
  const std::string out = dir.file("r.csv");
  const std::vector<std::string> base = {"bench", "--n", "500", "--level", "2", "--reps", "1", "--output", out, "--resume"};
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_cli(args);
    REQUIRE(r.code == 0);
    return r.err.find("already in") != std::string::npos;
  };
  CHECK_FALSE(run({"--kernel", "cpu-omp", "--threads", "1"}));
  CHECK(run({"--kernel", "cpu-omp", "--threads", "1"}));  // the same point: skipped
  CHECK_FALSE(run({"--kernel", "cpu-omp", "--threads", "2"}));
  CHECK_FALSE(run({"--kernel", "cpu-omp", "--threads", "1", "--domain", "0,0,4"}));
  CHECK(run({"--kernel", "cpu-omp", "--threads", "1", "--domain", "0,0,4"}));
  CHECK_FALSE(run({"--kernel", "cpu-omp", "--threads", "1", "--mass", "random"}));
  CHECK_FALSE(run({"--kernel", "cpu-fmm", "--near", "cpu-n3"}));
  CHECK_FALSE(run({"--kernel", "cpu-fmm", "--near", "cpu-serial"}));
  CHECK(run({"--kernel", "cpu-fmm", "--near", "cpu-n3"}));
  // Each measurement is its own row, telling its settings.
  const std::string text = test::read_text(out);
  CHECK(text.find("mass=random") != std::string::npos);
  CHECK(text.find(",cpu-serial,") != std::string::npos);
}
