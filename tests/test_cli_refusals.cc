// Options that no run would read, and runs that could only fail or compute nothing, are refused
// before any work with the option named; a refused run leaves no files or folders behind (the
// fourth review's findings: each of these had been accepted, dropped or half-run).
#include <filesystem>
#include <fstream>
#include <string>

#include "core/numbers.h"
#include "core/random.h"
#include "helpers.h"
#include "io/particle_file.h"

using namespace nf;

namespace {

void refused(const std::vector<std::string>& args, const std::string& says) {
  const auto r = test::run_cli(args);
  const std::string what = args[0] + " ... " + says;
  INFO(what);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(says) != std::string::npos);
}

}  // namespace

TEST_CASE("generator options that no input reads are refused, with the option named") {
  test::TempDir dir;
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "uniform", "--dim", "3", "--n", "50", "--output", in}).code == 0);
  for (const char* option : {"--dim", "--seed", "--mass", "--dist"}) {
    const std::string value = std::string(option) == "--dim" ? "2" : std::string(option) == "--mass" ? "random"
                              : std::string(option) == "--dist" ? "plummer" : "9";
    refused({"forces", "--input", in, "--kernel", "cpu-allpairs", option, value, "--output", dir.file("f.csv")},
            std::string(option) + " describes a generated input");
    refused({"simulate", "--input", in, "--kernel", "cpu-allpairs", "--dt", "0.1", "--steps", "1", option, value,
             "--output-dir", dir.file("run")},
            std::string(option) + " describes a generated input");
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("f.csv")));
  CHECK_FALSE(std::filesystem::exists(dir.file("run")));
  // --sample draws its targets with --seed, from a file too.
  CHECK(test::run_cli({"validate", "--input", in, "--kernel", "cpu-allpairs", "--level", "2", "--sample", "10", "--seed",
                       "3"})
            .code == 0);
  refused({"generate", "--dist", "uniform", "--n", "10", "--jitter", "0.5", "--output", dir.file("g.csv")},
          "--jitter displaces the lattice");
  refused({"generate", "--dist", "uniform", "--n", "10", "--clusters", "9", "--output", dir.file("g.csv")},
          "--clusters is the clusters distribution's");
  refused({"generate", "--dist", "uniform", "--n", "10", "--seed", "-1", "--output", dir.file("g.csv")}, "seed");
  refused({"generate", "--dist", "lattice", "--n", "9", "--jitter", "2", "--output", dir.file("g.csv")},
          "--jitter must lie in [0, 1], not 2");
  CHECK_FALSE(std::filesystem::exists(dir.file("g.csv")));
  // A sweep over distributions that include the clusters one takes --clusters.
  CHECK(test::run_cli({"bench", "--kernel", "cpu-serial", "--dist", "uniform,clusters", "--clusters", "3", "--n", "40",
                       "--level", "1", "--reps", "1", "--warmup", "0"})
            .code == 0);
  refused({"bench", "--list", "--kernel", "cpu-serial"}, "--list prints every kernel");
  // A level an all-pairs kernel over every pair does not use is said, not dropped.
  const auto f = test::run_cli({"forces", "--input", in, "--kernel", "cpu-allpairs", "--level", "3", "--output",
                                dir.file("f.csv")});
  CHECK(f.code == 0);
  CHECK(f.err.find("note: --level 3 is not used: cpu-allpairs sums over every pair") != std::string::npos);
  refused({"bench", "--kernel", "cpu-serial", "--n", "40", "--level", "1", "--output", dir.file("b.csv"), "--resume",
           "--remeasure"},
          "give one");
  // --threads with a one-thread kernel is said; with an OpenMP kernel it is not.
  const auto serial = test::run_cli({"forces", "--input", in, "--kernel", "cpu-serial", "--level", "2", "--threads",
                                     "2", "--output", dir.file("s.csv")});
  CHECK(serial.code == 0);
  CHECK(serial.err.find("note: --threads 2 does not change cpu-serial (one thread)") != std::string::npos);
  const auto omp = test::run_cli({"forces", "--input", in, "--kernel", "cpu-omp", "--level", "2", "--threads", "2",
                                  "--output", dir.file("o.csv")});
  CHECK(omp.code == 0);
  CHECK(omp.err.find("--threads") == std::string::npos);
  const auto bench = test::run_cli({"bench", "--kernel", "cpu-omp,cpu-serial", "--n", "40", "--level", "1",
                                    "--reps", "1", "--warmup", "0", "--threads", "1"});
  CHECK(bench.code == 0);
  CHECK(bench.err.find("note: --threads 1 does not change cpu-serial (one thread);") != std::string::npos);
  CHECK(bench.err.find("cpu-omp (") == std::string::npos);
}

TEST_CASE("simulate refuses what it would drop or could not do, and an empty frame window runs") {
  test::TempDir dir;
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "plummer", "--dim", "3", "--n", "40", "--output", in}).code == 0);
  const std::vector<std::string> run = {"simulate", "--input", in, "--kernel", "cpu-allpairs", "--dt", "0.01",
                                        "--steps", "4", "--output-dir"};
  auto with = [&](const std::string& out, std::vector<std::string> more) {
    std::vector<std::string> a = run;
    a.push_back(dir.file(out));
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  // Every k-th source from offset step mod k: k past N leaves steps without sources (zero force).
  refused(with("s1", {"--subsample", "41"}), "--subsample 41 is more than the 40 particles");
  CHECK(test::run_cli(with("s1b", {"--subsample", "40"})).code == 0);
  refused(with("s2", {"--level", "3"}), "--level 3 sets the tree level of a tree kernel");
  refused(with("s3", {"--render-size", "64"}), "--render-size shapes the frames");
  refused(with("s3", {"--render-window", "0,1,0,1"}), "--render-window shapes the frames");
  for (const char* out : {"s1", "s2", "s3"}) CHECK_FALSE(std::filesystem::exists(dir.file(out)));
  // A frame window without particles at step 0: every frame takes its own colour range, the run
  // completes (it had stopped after step 0's files with "the density range needs 0 < lo <= hi").
  const auto r = test::run_cli(with("w", {"--render-every", "2", "--render-window", "100,101,100,101"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* f : {"frame_000000.png", "frame_000002.png", "frame_000004.png", "snap_000004.csv"})
    CHECK(std::filesystem::exists(dir.file("w/" + std::string(f))));
  CHECK(r.out.find("snap_NNNNNN.csv at step 0 and the last") != std::string::npos);
  // ... and resumes from its run.ini (its range recorded as 0,0: none).
  std::vector<std::string> more = with("w", {"--render-every", "2", "--render-window", "100,101,100,101", "--resume"});
  more[8] = "6";  // --steps
  CHECK(test::run_cli(more).code == 0);
  CHECK(std::filesystem::exists(dir.file("w/frame_000006.png")));
}

TEST_CASE("experiment refuses a second file, keys of the other mode and unknown keys with their line") {
  test::TempDir dir;
  const std::string head = "dist = uniform\nn = 60\nlevel = 1\nkernel = cpu-serial\n";
  test::write_text(dir.file("a.ini"), "mode = bench\n" + head + "reps = 1\nwarmup = 0\n");
  refused({"experiment", dir.file("a.ini"), dir.file("other.ini"), "--results-dir", dir.file("r")},
          "experiment runs one file");
  refused({"experiment", dir.file("a.ini"), "--resume", "--remeasure", "--results-dir", dir.file("r")}, "give one");
  test::write_text(dir.file("v.ini"), "mode = validate\n" + head + "reps = 7\n");
  refused({"experiment", dir.file("v.ini"), "--results-dir", dir.file("r")}, "reps applies to mode = bench");
  test::write_text(dir.file("t.ini"), "mode = bench\n" + head + "kernal = cpu-serial\n");
  refused({"experiment", dir.file("t.ini"), "--results-dir", dir.file("r")}, "t.ini:6: unknown key 'kernal'");
  test::write_text(dir.file("s.ini"), "mode = bench\n" + head + "[Reduced]\nn = 10\n");
  refused({"experiment", dir.file("s.ini"), "--results-dir", dir.file("r")}, "s.ini:6: unknown section [Reduced]");
  refused({"experiment", dir.path().string(), "--results-dir", dir.file("r")}, "is a folder, not a file");
  test::write_text(dir.file("e.ini"), "mode = bench\n = 4\n");  // fuzzing: had thrown ambiguous_option
  refused({"experiment", dir.file("e.ini"), "--results-dir", dir.file("r")}, "e.ini:2: a line without a key");
  // A refusal found only at a point (a negative softening) leaves no empty results folder.
  test::write_text(dir.file("bad.ini"), "mode = bench\n" + head + "softening = -1\n");
  const auto r = test::run_cli({"experiment", dir.file("bad.ini"), "--results-dir", dir.file("r/deep")});
  CHECK(r.code == 2);
  CHECK_FALSE(std::filesystem::exists(dir.file("r")));
}

TEST_CASE("render writes PNG files only under a .png name") {
  test::TempDir dir;
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "uniform", "--n", "20", "--output", in}).code == 0);
  refused({"render", "--input", in, "--output", dir.file("a.jpg")}, "render writes PNG images");
  refused({"render", "--input", in, "--output", dir.file("a")}, "render writes PNG images");
  CHECK(test::run_cli({"render", "--input", in, "--output", dir.file("a.PNG"), "--size", "8"}).code == 0);
}

TEST_CASE("forces: a float input float32 cannot resolve is refused, an overflowing force is not written") {
  test::TempDir dir;
  // 200 points across 1e-12 at 0.5: float32 steps are 6e-8 there, so every float kernel would see
  // one position (all-zero forces, exit 0 before).
  std::string text = "x,y,z,m\n";
  nf::Random r(3);
  for (int i = 0; i < 200; ++i)
    text += format_double(0.5 + 1e-12 * r.uniform()) + "," + format_double(0.5 + 1e-12 * r.uniform()) + ",0.5,1\n";
  test::write_text(dir.file("tiny.csv"), text);
  for (const char* k : {"cpu-serial", "cpu-fmm", "cpu-allpairs"})
    refused({"forces", "--input", dir.file("tiny.csv"), "--kernel", k, "--level", "1", "--output", dir.file("t.csv")},
            "fewer than 1024 steps across the input");
  CHECK(test::run_cli({"forces", "--input", dir.file("tiny.csv"), "--kernel", "cpu-serial", "--level", "1",
                       "--precision", "double", "--output", dir.file("t.csv")})
            .code == 0);
  // Masses of 1e30 a micrometre apart: a force past float32's range; nothing is written.
  test::write_text(dir.file("ovf.csv"), "x,y,z,m\n0,0,0,1e30\n1e-6,0,0,1e30\n0.5,0.5,0.5,1\n1,1,1,1\n");
  const auto o = test::run_cli({"forces", "--input", dir.file("ovf.csv"), "--kernel", "cpu-serial", "--level", "1",
                                "--softening", "0", "--output", dir.file("o.csv")});
  CHECK(o.code == 3);
  CHECK(o.err.find("are not finite (the first: particle 0") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("o.csv")));
  // simulate stops where the state stops being finite (the next tree build, or the next snapshot
  // step), before writing that step's snapshot.
  const auto s = test::run_cli({"simulate", "--input", dir.file("ovf.csv"), "--kernel", "cpu-serial", "--level", "1",
                                "--softening", "0", "--dt", "0.01", "--steps", "3", "--output-dir", dir.file("run")});
  CHECK(s.code == 3);
  CHECK(s.err.find("no longer finite") != std::string::npos);

  CHECK(std::filesystem::exists(dir.file("run/snap_000000.csv")));
  CHECK_FALSE(std::filesystem::exists(dir.file("run/snap_000003.csv")));
}

TEST_CASE("a tree refuses positions whose span float64 cannot divide into boxes") {
  test::TempDir dir;
  // +-1e308: the span overflows (every particle had come out NaN); 1e-323 apart: boxes below the
  // normal numbers (M2L had stopped with an internal error, exit 3).
  test::write_text(dir.file("huge.csv"), "x,y,z,m\n-1e308,0,0,1\n1e308,0,0,1\n0,0,0,1\n");
  test::write_text(dir.file("tiny.csv"), "x,y,z,m\n0,0,0,1\n5e-324,0,0,1\n0,1e-323,0,1\n");
  for (const char* f : {"huge.csv", "tiny.csv"})
    for (const char* k : {"cpu-fmm", "cpu-serial"})
      refused({"forces", "--input", dir.file(f), "--kernel", k, "--level", "3", "--precision", "double", "--softening",
               "0", "--output", dir.file("t.csv")},
              std::string(f) == "huge.csv" ? "span more than float64 can hold" : "below 1e-290");
  refused({"forces", "--input", dir.file("tiny.csv"), "--kernel", "cpu-serial", "--level", "1", "--precision", "double",
           "--domain", "0,0,0,1e-300", "--output", dir.file("t.csv")},
          "below 1e-290");
}

TEST_CASE("full methods: options they would drop, and an order list with a bad entry, are refused first") {
  test::TempDir dir;
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "plummer", "--dim", "3", "--n", "300", "--output", in}).code == 0);
  // --round-inputs had been accepted, ignored, and named in the "wrote" line.
  refused({"forces", "--input", in, "--kernel", "cpu-fmm", "--level", "2", "--precision", "double", "--round-inputs",
           "--output", dir.file("r.csv")},
          "--round-inputs applies to the all-pairs kernels");
  CHECK_FALSE(std::filesystem::exists(dir.file("r.csv")));
  // An accuracy the model does not reach even at order 20 had run at p = 20 without a word.
  refused({"forces", "--input", in, "--kernel", "cpu-fmm", "--level", "2", "--accuracy", "1e-12", "--output",
           dir.file("a.csv")},
          "the error model reaches");
  CHECK_FALSE(std::filesystem::exists(dir.file("a.csv")));
  CHECK(test::run_cli({"forces", "--input", in, "--kernel", "cpu-fmm", "--level", "2", "--order", "20", "--output",
                       dir.file("a.csv")})
            .code == 0);
  // Order 21 after a valid 8: refused before order 8 ran and wrote its row.
  refused({"validate", "--input", in, "--kernel", "cpu-fmm", "--level", "2", "--order", "8,21", "--output",
           dir.file("v.csv")},
          "--order: 21 is not a valid value (at most 20)");
  CHECK_FALSE(std::filesystem::exists(dir.file("v.csv")));
  // A softening of some 1e13 leaf sides: float32 expansions would lose the far field (relative L2
  // error 1.6e-3 before the check, 1.0 at 1e16); double runs.
  const Particles p = [&] {
    Particles q = io::read_particles(in);
    for (std::size_t i = 0; i < q.size(); ++i) q.x[i] *= 1e-13, q.y[i] *= 1e-13, q.z[i] *= 1e-13;
    return q;
  }();
  const std::string small = dir.file("small.csv");
  io::write_particles(small, p);
  refused({"forces", "--input", small, "--kernel", "cpu-fmm", "--level", "3", "--softening", "1", "--output",
           dir.file("f.csv")},
          "its far field would be lost; use --precision double");
  CHECK_FALSE(std::filesystem::exists(dir.file("f.csv")));
  CHECK(test::run_cli({"forces", "--input", small, "--kernel", "cpu-fmm", "--level", "3", "--softening", "1",
                       "--precision", "double", "--output", dir.file("d.csv")})
            .code == 0);
}

TEST_CASE("a folder given as input says so; forces does not write CSV under a particle format's name; model's N fits") {
  test::TempDir dir;
  const std::string folder = dir.file("snapshots");
  std::filesystem::create_directory(folder);
  refused({"convert", "--input", folder, "--output", dir.file("x.csv")}, "is a folder, not a file");
  refused({"forces", "--input", folder, "--kernel", "cpu-allpairs", "--output", dir.file("a.csv")},
          "is a folder, not a file");
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "uniform", "--dim", "2", "--n", "30", "--output", in}).code == 0);
  for (const char* name : {"acc.bin", "acc.tipsy", "acc.tab"}) {
    refused({"forces", "--input", in, "--kernel", "cpu-allpairs", "--output", dir.file(name)}, "forces writes CSV");
    CHECK_FALSE(std::filesystem::exists(dir.file(name)));
  }
  CHECK(test::run_cli({"forces", "--input", in, "--kernel", "cpu-allpairs", "--output", dir.file("acc.out")}).code == 0);
  refused({"model", "--level", "3", "--ppb", "9223372036854775807"}, "passes the 2^32 - 1 particles");
  CHECK(test::run_cli({"model", "--level", "3", "--ppb", "1048575"}).code == 0);  // well below 2^32
}

TEST_CASE("simulate --resume reads the last snapshot even when it completes the run") {
  test::TempDir dir;
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "uniform", "--dim", "2", "--n", "40", "--output", in}).code == 0);
  const std::vector<std::string> run = {"simulate", "--input", in, "--kernel", "cpu-n3", "--level", "2", "--dt",
                                        "0.01", "--steps", "2", "--output-dir", dir.file("run")};
  REQUIRE(test::run_cli(run).code == 0);
  auto resume = run;
  resume.push_back("--resume");
  CHECK(test::run_cli(resume).out.find("is complete") != std::string::npos);
  // An emptied last snapshot had been taken for a finished run, exit 0.
  { std::ofstream(dir.file("run/snap_000002.csv"), std::ios::trunc); }
  const auto r = test::run_cli(resume);
  CHECK(r.code == 2);
  CHECK(r.err.find("snap_000002.csv") != std::string::npos);
  CHECK(r.out.find("is complete") == std::string::npos);
}

TEST_CASE("--resume compares the recorded numbers as numbers; a number that underflows is refused") {
  test::TempDir dir;
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "uniform", "--dim", "2", "--n", "40", "--output", in}).code == 0);
  std::vector<std::string> run = {"simulate", "--input", in, "--kernel", "cpu-n3", "--level", "2", "--dt",
                                  "0.01", "--steps", "2", "--softening", "0.05", "--output-dir", dir.file("run")};
  REQUIRE(test::run_cli(run).code == 0);
  // run.ini edited by hand: "0.010" and "5e-2" are the run's 0.01 and 0.05 (they had been refused as text).
  std::string ini = test::read_text(dir.file("run/run.ini"));
  for (auto [from, to] : {std::pair<std::string, std::string>{"dt = 0.01\n", "dt = 0.010\n"},
                          {"softening = 0.05\n", "softening = 5e-2\n"}}) {
    const auto at = ini.find(from);
    REQUIRE(at != std::string::npos);
    ini.replace(at, from.size(), to);
  }
  { std::ofstream(dir.file("run/run.ini"), std::ios::trunc) << ini; }
  run[10] = "4";
  run.push_back("--resume");
  const auto r = test::run_cli(run);
  CHECK_MESSAGE(r.code == 0, r.err);
  run[8] = "0.02";
  refused(run, "--dt 0.02 (the run has 0.010)");
  // 1e-400 is not 0: it had been read as eps = 0 without a word.
  refused({"forces", "--input", in, "--kernel", "cpu-allpairs", "--softening", "1e-400", "--output", dir.file("f.csv")},
          "1e-400");
  CHECK_FALSE(std::filesystem::exists(dir.file("f.csv")));
  // The same in an experiment file and on its command line (they had run with eps = 0).
  const std::string exp = dir.file("e.ini");
  { std::ofstream(exp) << "mode = validate\nkernel = cpu-serial\nlevel = 1\nn = 64\nsoftening = 1e-400\noutput = " << dir.file("e.csv") << "\n"; }
  refused({"experiment", exp}, "1e-400 is out of range");
  { std::ofstream(exp) << "mode = validate\nkernel = cpu-serial\nlevel = 1\nn = 64\noutput = " << dir.file("e.csv") << "\n"; }
  refused({"experiment", exp, "--softening", "1e-400"}, "1e-400 is out of range");
  CHECK_FALSE(std::filesystem::exists(dir.file("e.csv")));
}

TEST_CASE("a sweep's levels are checked against --accuracy before its first point; a float mass too small is named") {
  test::TempDir dir;
  // Order 20 reaches 1e-7 at 2D level 2 but not at 7 (the model grows with the level): level 2's row
  // had been written before level 7 was refused.
  refused({"validate", "--dist", "uniform", "--n", "3000", "--dim", "2", "--kernel", "cpu-fmm", "--level", "2,7",
           "--accuracy", "1e-7", "--precision", "double", "--output", dir.file("v.csv")},
          "leaf level 7");
  CHECK_FALSE(std::filesystem::exists(dir.file("v.csv")));
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "uniform", "--dim", "2", "--n", "3000", "--output", in}).code == 0);
  refused({"bench", "--input", in, "--kernel", "cpu-fmm", "--level", "2,7", "--accuracy", "1e-7", "--precision",
           "double", "--reps", "1", "--warmup", "0", "--output", dir.file("b.csv")},
          "leaf level 7");
  CHECK_FALSE(std::filesystem::exists(dir.file("b.csv")));
  // --level auto takes only levels where the accuracy is reachable.
  const auto a = test::run_cli({"forces", "--input", in, "--kernel", "cpu-fmm", "--level", "auto", "--accuracy", "1e-7",
                                "--precision", "double", "--output", dir.file("f.csv")});
  INFO(a.err);
  CHECK(a.code == 0);
  // A total mass of 1e-31: no float32 level keeps the far field. The mass is named (the softening,
  // 0, and a shallower level had been), and --level auto refuses instead of summing directly.
  Particles p = io::read_particles(in);
  for (double& m : p.m) m = 1e-31 / double(p.size());
  io::write_particles(dir.file("light.csv"), p);
  for (const char* level : {"4", "auto"})
    refused({"forces", "--input", dir.file("light.csv"), "--kernel", "cpu-fmm", "--level", level, "--softening", "0",
             "--output", dir.file("l.csv")},
            "the bodies' total mass");
  CHECK_FALSE(std::filesystem::exists(dir.file("l.csv")));
  // Masses of 1e32: the expansions pass float32's range (NaN forces, and a message that blamed the
  // softening); refused naming the mass; double runs.
  for (double& m : p.m) m = 1e32;
  io::write_particles(dir.file("heavy.csv"), p);
  refused({"forces", "--input", dir.file("heavy.csv"), "--kernel", "cpu-fmm", "--level", "4", "--output",
           dir.file("h.csv")},
          "near float32's largest value");
  CHECK(test::run_cli({"forces", "--input", dir.file("heavy.csv"), "--kernel", "cpu-fmm", "--level", "4", "--precision",
                       "double", "--output", dir.file("h.csv")})
            .code == 0);
}

TEST_CASE("stray words, empty values, an output that is the input, absurd --threads and a missing report script") {
  test::TempDir dir;
  const std::string in = dir.file("p.csv");
  REQUIRE(test::run_cli({"generate", "--dist", "uniform", "--dim", "2", "--n", "200", "--output", in}).code == 0);
  const std::string before = test::read_text(in);
  // A second kernel after the options had been dropped ("all kernels PASS" for the first alone).
  refused({"validate", "--kernel", "cpu-serial", "--input", in, "--level", "2", "cpu-omp"},
          "unexpected argument 'cpu-omp'");
  refused({"tree", "--input", in, "--level", "2", "boxes.csv"}, "unexpected argument 'boxes.csv'");
  // An empty value had read as "not given": no point run (exit 0), or a generated input for --input "".
  refused({"validate", "--kernel", "cpu-serial", "--n", "100", "--level", "2", "--dist", ""}, "--dist: an empty value");
  refused({"validate", "--kernel", "cpu-serial", "--level", "2", "--input", ""}, "--input: an empty value");
  test::write_text(dir.file("e.ini"), "description = x\nmode = bench\nn = 100\nlevel = 2\ndist =\nkernel = cpu-serial\n");
  refused({"experiment", dir.file("e.ini"), "--results-dir", dir.file("res")}, "e.ini:5: 'dist' has no value");
  // A bad value of the file names its line (it had named only the option); a byte-order mark is read past.
  test::write_text(dir.file("n.ini"), "\xEF\xBB\xBF" "description = x\nmode = bench\nn = 100x\nlevel = 2\nkernel = cpu-serial\n");
  refused({"experiment", dir.file("n.ini"), "--results-dir", dir.file("res")}, "n.ini:3: n: '100x' is not an integer");
  refused({"experiment", "--results-dir", dir.file("res"), dir.file("n.ini")}, "experiment takes its file first");
  refused({"experiment", dir.file("n.ini"), "--results-dir", dir.file("a"), "--results-dir", dir.file("b")},
          "--results-dir is given twice");
  refused({"experiment", dir.file("n.ini"), "--results-dir="}, "--results-dir: an empty value");
  // The particles had been replaced by the accelerations, exit 0.
  refused({"forces", "--input", in, "--kernel", "cpu-serial", "--level", "2", "--output", in}, "is the input file");
  refused({"bench", "--input", in, "--kernel", "cpu-serial", "--level", "2", "--reps", "1", "--output", in},
          "is the input file");
  CHECK(test::read_text(in) == before);
  refused({"forces", "--input", in, "--kernel", "cpu-serial", "--level", "2", "--threads", "100000", "--output",
           dir.file("f.csv")},
          "--threads: 100000 is not a valid value (at most 4096)");
  // A generator's own condition (a lattice's N = s^2) had been checked when its point came, after
  // the earlier points' rows were written.
  refused({"validate", "--kernel", "cpu-serial", "--dist", "uniform,lattice", "--n", "1000", "--level", "3", "--output",
           dir.file("sw.csv")},
          "lattice needs N = s^2");
  CHECK_FALSE(std::filesystem::exists(dir.file("sw.csv")));
  // A value listed twice had been measured twice, its rows appended twice.
  refused({"validate", "--kernel", "cpu-serial,cpu-serial", "--input", in, "--level", "2"}, "'cpu-serial' is listed twice");
  refused({"validate", "--kernel", "cpu-serial", "--input", in, "--level", "2,2"}, "'2' is listed twice");
  refused({"bench", "--kernel", "cpu-serial", "--dist", "uniform", "--n", "100,100", "--level", "2"}, "100 is listed twice");
  // reproduce had run every point before finding no make_report.py under --paper.
  refused({"reproduce", "--only", "table3", "--results", dir.file("rep"), "--paper", dir.file("nopaper"), "--reduced"},
          "make_report.py");
  CHECK_FALSE(std::filesystem::exists(dir.file("rep/table3")));
}

TEST_CASE("a simulation that fails before its first snapshot leaves no folder behind") {
  test::TempDir dir;
  // Masses of 1e300 at softening 0: the step-0 forces pass float64's range.
  test::write_text(dir.file("heavy.csv"), "x,y,m\n0,0,1e300\n1e-10,0,1e300\n0.5,0.5,1\n");
  const std::vector<std::string> run = {"simulate", "--input", dir.file("heavy.csv"), "--kernel", "cpu-allpairs",
                                        "--precision", "double", "--softening", "0", "--dt", "0.01", "--steps", "2",
                                        "--output-dir", dir.file("run")};
  const auto r = test::run_cli(run);
  CHECK(r.code != 0);
  CHECK_FALSE(std::filesystem::exists(dir.file("run")));  // its run.ini had stayed: no rerun, no resume
}
