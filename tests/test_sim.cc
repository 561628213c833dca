// nearfield simulate on the CPU: energy checks, an independent leapfrog (all pairs, near field), time
// reversibility, a two-body orbit, momentum, files and steps, --resume, --subsample, refusals.
#include <algorithm>
#include <filesystem>
#include <set>

#include "io/csv_file.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "helpers.h"
#include "io/particle_file.h"
#include "sim/run_files.h"
#include "sim_checks.h"

using namespace nf;
using namespace nf::test;
namespace fs = std::filesystem;

namespace {

std::set<std::string> files_in(const TempDir& dir, const std::string& run) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.file(run))) names.insert(e.path().filename().string());
  return names;
}

std::string write_input(const TempDir& dir, const Particles& p, const std::string& name = "in.bin") {
  io::write_particles(dir.file(name), p);
  return dir.file(name);
}

}  // namespace

TEST_CASE("simulate: energy check, Plummer N = 1024, eps 0.05, dt 1/128, 128 steps, cpu-allpairs float64") {
  TempDir dir;
  const Particles p0 = plummer(3, 1024, 11);
  const std::string in = write_input(dir, p0);
  simulate_ok({"--input", in, "--kernel", "cpu-allpairs", "--precision", "double", "--softening", "0.05", "--dt",
               "0.0078125", "--steps", "128", "--snapshot-every", "64", "--output-dir", dir.file("run"), "--format", "bin"});
  const Particles a = snapshot(dir, "run", 0, "bin"), b = snapshot(dir, "run", 128, "bin");
  // The energies computed here, independently of the program's diagnostics.
  const double e0 = reference_kinetic(a) + reference_potential(a, 0.05);
  const double e1 = reference_kinetic(b) + reference_potential(b, 0.05);
  MESSAGE("|dE/E| after 128 steps: " << std::fabs((e1 - e0) / e0));
  CHECK(std::fabs((e1 - e0) / e0) <= 5e-5);
  // The particles really moved (a frozen integrator would conserve energy too).
  CHECK(max_position_diff(a, b) > 0.05);
  // energy.csv says the same as the independent computation.
  const auto rows = energy_rows(dir, "run");
  REQUIRE(rows.size() == 3);
  CHECK(rows[2].step == 128);
  CHECK(rows[2].time == 1.0);
  CHECK(rows[0].potential == doctest::Approx(reference_potential(a, 0.05)).epsilon(1e-12));
  CHECK(rows[2].kinetic == doctest::Approx(reference_kinetic(b)).epsilon(1e-12));
  CHECK(rows[2].rel_energy_error == doctest::Approx((e1 - e0) / std::fabs(e0)).epsilon(1e-6));
  CHECK(rows[0].rel_energy_error == 0.0);
}

TEST_CASE("simulate follows an independent float64 leapfrog: all pairs and the near field, 2D and 3D") {
  TempDir dir;
  struct Case {
    std::string kernel;
    int dim, level;
    std::string dist;
  };
  for (const Case& c : {Case{"cpu-allpairs", 3, -1, "plummer"}, Case{"cpu-allpairs", 2, -1, "plummer"},
                        Case{"cpu-serial", 2, 2, "clusters"}, Case{"cpu-omp-n3", 3, 1, "plummer"}}) {
    CAPTURE(c.kernel);
    CAPTURE(c.dim);
    Particles p0 = make(c.dist, c.dim, 301, 5);  // odd N, random masses
    p0.add_velocities();
    const std::string in = write_input(dir, p0, c.kernel + std::to_string(c.dim) + ".bin");
    const std::string run = "run-" + c.kernel + std::to_string(c.dim);
    std::vector<std::string> args = {"--input", in, "--kernel", c.kernel, "--precision", "double", "--softening",
                                     "0.01", "--dt", "0.001", "--steps", "12", "--output-dir", dir.file(run), "--format",
                                     "bin"};
    if (c.level >= 0) args.insert(args.end(), {"--level", std::to_string(c.level)});
    simulate_ok(args);
    const Particles ref = reference_leapfrog(p0, 0.001, 12, 0.01, c.level);
    const Particles got = snapshot(dir, run, 12, "bin");
    CHECK(max_position_diff(p0, ref) > 1e-4);  // it moved
    CHECK(max_position_diff(got, ref) <= 1e-11);
    CHECK(max_velocity_diff(got, ref) <= 1e-9);
    // The potential over the pairs the kernel computes, checked against this file's own box rule.
    const auto rows = energy_rows(dir, run);
    CHECK(rows.back().potential == doctest::Approx(reference_potential(ref, 0.01, c.level)).epsilon(1e-11));
  }
}

TEST_CASE("simulate: leapfrog is time reversible") {
  TempDir dir;
  const Particles p0 = plummer(3, 128, 4);
  simulate_ok({"--input", write_input(dir, p0), "--kernel", "cpu-allpairs", "--precision", "double", "--softening",
               "0.05", "--dt", "0.015625", "--steps", "64", "--output-dir", dir.file("fwd"), "--format", "bin"});
  Particles back = snapshot(dir, "fwd", 64, "bin");
  CHECK(max_position_diff(p0, back) > 0.1);
  for (auto* v : {&back.vx, &back.vy, &back.vz})
    for (double& x : *v) x = -x;
  simulate_ok({"--input", write_input(dir, back, "back.bin"), "--kernel", "cpu-allpairs", "--precision", "double",
               "--softening", "0.05", "--dt", "0.015625", "--steps", "64", "--output-dir", dir.file("bwd"), "--format",
               "bin"});
  Particles end = snapshot(dir, "bwd", 64, "bin");
  CHECK(max_position_diff(end, p0) <= 1e-10);
  for (auto* v : {&end.vx, &end.vy, &end.vz})
    for (double& x : *v) x = -x;
  CHECK(max_velocity_diff(end, p0) <= 1e-10);
}

TEST_CASE("simulate: a circular two-body orbit returns after one period 2 pi, with second-order error") {
  TempDir dir;
  // Masses 1/2 at distance 1: relative speed sqrt(M / d) = 1 on a circle, period 2 pi (G = 1).
  Particles p;
  p.dim = 2;
  p.x = {-0.5, 0.5};
  p.y = {0.0, 0.0};
  p.m = {0.5, 0.5};
  p.vx = {0.0, 0.0};
  p.vy = {-0.5, 0.5};
  const std::string in = write_input(dir, p);
  const double period = 2 * 3.141592653589793;
  double error[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const int steps = 2000 << k;
    const std::string run = "orbit" + std::to_string(steps);
    simulate_ok({"--input", in, "--kernel", "cpu-allpairs", "--precision", "double", "--softening", "0", "--dt",
                 format_double(period / steps), "--steps", std::to_string(steps), "--snapshot-every",
                 std::to_string(steps / 4), "--output-dir", dir.file(run), "--format", "bin"});
    const Particles quarter = snapshot(dir, run, steps / 4, "bin"), half = snapshot(dir, run, steps / 2, "bin"),
                    full = snapshot(dir, run, steps, "bin");
    // Counter-clockwise: a quarter period turns (-0.5, 0) into (0, -0.5), half of it into (0.5, 0).
    CHECK(std::hypot(quarter.x[0], quarter.y[0] + 0.5) <= 5e-5);
    CHECK(std::hypot(half.x[0] - 0.5, half.y[0]) <= 5e-5);
    error[k] = std::hypot(full.x[0] + 0.5, full.y[0]);
    CHECK(error[k] <= 5e-5);
    for (const Particles* s : {&quarter, &half, &full}) {
      CHECK(std::hypot(s->x[0] - s->x[1], s->y[0] - s->y[1]) == doctest::Approx(1.0).epsilon(1e-5));
      CHECK(s->x[0] + s->x[1] == doctest::Approx(0.0).scale(1e-12));  // centre of mass at rest
    }
  }
  // Leapfrog is second order: half the step, a quarter of the error.
  MESSAGE("position error after one period: " << error[0] << " (2000 steps), " << error[1] << " (4000 steps)");
  CHECK(error[0] / error[1] == doctest::Approx(4.0).epsilon(0.05));
}

TEST_CASE("simulate: a Newton-3 kernel conserves momentum") {
  TempDir dir;
  const Particles p0 = make("plummer", 3, 600, 9);  // random masses
  simulate_ok({"--input", write_input(dir, p0), "--kernel", "cpu-n3", "--level", "2", "--precision", "double",
               "--softening", "0.02", "--dt", "0.005", "--steps", "40", "--snapshot-every", "10", "--output-dir",
               dir.file("n3"), "--format", "bin"});
  double scale = 0;
  for (std::size_t i = 0; i < p0.size(); ++i) scale += p0.m[i] * std::sqrt(p0.vx[i] * p0.vx[i] + p0.vy[i] * p0.vy[i] + p0.vz[i] * p0.vz[i]);
  const auto rows = energy_rows(dir, "n3");
  REQUIRE(rows.size() == 5);
  const Particles last = snapshot(dir, "n3", 40, "bin");
  CHECK(max_position_diff(p0, last) > 1e-3);
  double px = 0;
  for (std::size_t i = 0; i < last.size(); ++i) px += last.m[i] * last.vx[i];
  CHECK(rows.back().px == doctest::Approx(px).epsilon(1e-12));
  for (const auto& r : rows) {
    CHECK(std::fabs(r.px - rows[0].px) <= 1e-13 * scale);
    CHECK(std::fabs(r.py - rows[0].py) <= 1e-13 * scale);
    CHECK(std::fabs(r.pz - rows[0].pz) <= 1e-13 * scale);
  }
}

TEST_CASE("simulate: snapshots, energy rows and frames at the right steps; ids, masses and time kept") {
  TempDir dir;
  Particles p0 = make("uniform", 2, 57, 2);
  p0.id.resize(p0.size());
  for (std::size_t i = 0; i < p0.size(); ++i) p0.id[i] = 1000 + 3 * std::int64_t(i);
  write_particles_csv(dir.file("in.csv"), p0);
  simulate_ok({"--input", dir.file("in.csv"), "--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "10",
               "--snapshot-every", "4", "--render-every", "5", "--render-size", "64", "--output-dir", dir.file("a")});
  CHECK(files_in(dir, "a") == std::set<std::string>{"run.ini", "energy.csv", "snap_000000.csv", "snap_000004.csv",
                                                    "snap_000008.csv", "snap_000010.csv", "frame_000000.png",
                                                    "frame_000005.png", "frame_000010.png"});
  std::vector<std::uint64_t> steps;
  for (const auto& r : energy_rows(dir, "a")) {
    steps.push_back(r.step);
    CHECK(r.time == doctest::Approx(0.01 * double(r.step)).epsilon(1e-15));
  }
  CHECK(steps == std::vector<std::uint64_t>{0, 4, 8, 10});
  const Particles s = snapshot(dir, "a", 8, "csv");
  REQUIRE(s.size() == p0.size());
  CHECK(s.id == p0.id);
  CHECK(s.m == p0.m);
  CHECK(s.has_velocities());
  CHECK(read_text(dir.file("a/energy.csv")).find("# forces: all pairs: the exact softened dynamics") != std::string::npos);

  // --snapshot-every 0: step 0 and the last only; --steps 0: step 0 only.
  simulate_ok({"--input", dir.file("in.csv"), "--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "7",
               "--output-dir", dir.file("b"), "--format", "tipsy"});
  CHECK(files_in(dir, "b") == std::set<std::string>{"run.ini", "energy.csv", "snap_000000.tipsy", "snap_000007.tipsy"});
  simulate_ok({"--input", dir.file("in.csv"), "--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "0",
               "--output-dir", dir.file("c")});
  CHECK(files_in(dir, "c") == std::set<std::string>{"run.ini", "energy.csv", "snap_000000.csv"});
}

TEST_CASE("simulate: where the step-0 energy is 0, rel_energy_error is E - E0, never NaN") {
  TempDir dir;  // one particle at rest, two coincident ones with eps = 0: E0 = 0 (had written -nan)
  write_particles_csv(dir.file("a.csv"), from_points(2, {{0.5, 0.5}}));
  write_particles_csv(dir.file("b.csv"), from_points(3, {{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}}));
  for (const std::string run : {"a", "b"}) {
    simulate_ok({"--input", dir.file(run + ".csv"), "--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "3",
                 "--softening", "0", "--snapshot-every", "1", "--output-dir", dir.file(run)});
    CHECK(energy_rows(dir, run).size() == 4);
    for (const auto& r : energy_rows(dir, run)) CHECK((r.total == 0.0 && r.rel_energy_error == 0.0));
  }
  CHECK(read_text(dir.file("a/energy.csv")).find("(E - E0 where E0 = 0)") != std::string::npos);
}

TEST_CASE("simulate: a near-field kernel says it computes only the near field") {
  TempDir dir;
  const Particles p0 = make("uniform", 2, 200, 3);
  const CliResult r = simulate_ok({"--input", write_input(dir, p0), "--kernel", "cpu-serial", "--level", "3", "--dt",
                                   "0.001", "--steps", "2", "--output-dir", dir.file("nf")});
  CHECK(r.out.find("forces: near field only") != std::string::npos);
  const std::string csv = read_text(dir.file("nf/energy.csv"));
  CHECK(csv.find("# forces: near field only") != std::string::npos);
  CHECK(csv.find(",near-field\n") != std::string::npos);
  CHECK(read_text(dir.file("nf/run.ini")).find("forces = near-field") != std::string::npos);
}

TEST_CASE("simulate --resume continues bit for bit from the last snapshot") {
  TempDir dir;
  const Particles p0 = make("plummer", 3, 150, 21);
  const std::string in = write_input(dir, p0);
  for (const std::vector<std::string>& kernel :
       {std::vector<std::string>{"--kernel", "cpu-allpairs", "--precision", "double"},
        std::vector<std::string>{"--kernel", "cpu-serial", "--level", "2"}}) {
    CAPTURE(kernel[1]);
    auto args = [&](const std::string& run, const std::string& steps) {
      std::vector<std::string> a = {"--input", in, "--dt", "0.01", "--steps", steps, "--snapshot-every", "4",
                                    "--softening", "0.05", "--render-every", "4", "--render-size", "48",
                                    "--output-dir", dir.file(run + kernel[1]), "--format", "bin"};
      a.insert(a.end(), kernel.begin(), kernel.end());
      return a;
    };
    const std::string ext = ".bin";
    simulate_ok(args("whole", "12"));
    // Stopped after step 6 (not on the snapshot grid), then continued to 12.
    simulate_ok(args("split", "6"));
    auto resume = args("split", "12");
    resume.push_back("--resume");
    simulate_ok(resume);
    // Interrupted after the snapshot of step 4: the later files are gone.
    simulate_ok(args("cut", "12"));
    for (const char* f : {"snap_000008.bin", "snap_000012.bin", "frame_000008.png", "frame_000012.png"})
      fs::remove(dir.file("cut" + kernel[1] + "/" + f));
    auto resume_cut = args("cut", "12");
    resume_cut.push_back("--resume");
    const CliResult r = simulate_ok(resume_cut);
    CHECK(r.out.find("from the snapshot of step 4") != std::string::npos);
    for (const std::string run : {"split", "cut"}) {
      CAPTURE(run);
      for (const char* f : {"snap_000012.bin", "frame_000008.png", "frame_000012.png"})
        CHECK(read_text(dir.file(run + kernel[1] + "/" + f)) == read_text(dir.file("whole" + kernel[1] + "/" + f)));
    }
    CHECK(read_text(dir.file("cut" + kernel[1] + "/energy.csv")) == read_text(dir.file("whole" + kernel[1] + "/energy.csv")));
    // Resuming a complete run does nothing.
    const CliResult again = simulate_ok(resume_cut);
    CHECK(again.out.find("is complete") != std::string::npos);
  }
}

TEST_CASE("simulate --resume refuses a different run, a missing run and a fresh run over an old one") {
  TempDir dir;
  const std::string in = write_input(dir, make("uniform", 2, 40, 1));
  simulate_ok({"--input", in, "--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "4", "--snapshot-every", "2",
               "--output-dir", dir.file("r")});
  const auto before = files_in(dir, "r");
  const std::string ini = read_text(dir.file("r/run.ini"));
  auto refused = [&](std::vector<std::string> args, const std::string& says) {
    args.insert(args.begin(), "simulate");
    const CliResult r = run_cli(args);
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find(says) != std::string::npos, r.err);
    CHECK(files_in(dir, "r") == before);
    CHECK(read_text(dir.file("r/run.ini")) == ini);
  };
  refused({"--kernel", "cpu-allpairs", "--dt", "0.02", "--steps", "8", "--snapshot-every", "2", "--output-dir",
           dir.file("r"), "--resume"},
          "--dt 0.02 (the run has 0.01)");
  refused({"--kernel", "cpu-serial", "--level", "1", "--dt", "0.01", "--steps", "8", "--snapshot-every", "2",
           "--output-dir", dir.file("r"), "--resume"},
          "--kernel cpu-serial (the run has cpu-allpairs)");
  refused({"--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "8", "--snapshot-every", "3", "--output-dir",
           dir.file("r"), "--resume"},
          "--snapshot-every 3");
  refused({"--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "2", "--snapshot-every", "2", "--output-dir",
           dir.file("r"), "--resume"},
          "past --steps 2");
  refused({"--input", in, "--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "4", "--output-dir", dir.file("r")},
          "already holds a run");
  const CliResult none = run_cli({"simulate", "--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "4",
                                  "--output-dir", dir.file("empty"), "--resume"});
  CHECK(none.code == 2);
  CHECK(none.err.find("holds no run") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("empty")));
  // The same settings continue it.
  simulate_ok({"--kernel", "cpu-allpairs", "--dt", "0.01", "--steps", "8", "--snapshot-every", "2", "--output-dir",
               dir.file("r"), "--resume"});
  CHECK(energy_rows(dir, "r").back().step == 8);
}

TEST_CASE("simulate refuses bad options before any work") {
  TempDir dir;
  const std::string in2 = write_input(dir, make("uniform", 2, 30, 1));
  const std::string out = dir.file("never");
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<std::string> base = {"--input", in2, "--output-dir", out, "--steps", "3"};
  std::vector<Bad> cases = {
      {{"--kernel", "cpu-allpairs", "--dt", "0"}, "--dt must be a finite number > 0"},
      {{"--kernel", "cpu-allpairs", "--dt", "-0.1"}, "--dt must be a finite number > 0"},
      {{"--kernel", "cpu-allpairs", "--dt", "nan"}, "--dt"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--softening", "-1"}, "--softening"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--subsample", "0"}, "--subsample must be at least 1"},
      {{"--kernel", "cpu-serial", "--level", "2", "--dt", "0.1", "--subsample", "2"}, "near-field kernel"},
      {{"--kernel", "cpu-serial", "--dt", "0.1"}, "--level is required"},
      {{"--kernel", "cpu-allpairs", "--level", "auto", "--dt", "0.1"}, "--level auto"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--format", "tab"}, "--format tab"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--format", "xyz"}, "unknown file format"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--snapshot-every", "-1"}, "--snapshot-every"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--render-every", "1", "--render-size", "0"}, "--render-size"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--render-every", "1", "--render-plane", "xz"}, "plane"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--precision", "half"}, "unknown precision"},
      {{"--kernel", "no-such-kernel", "--dt", "0.1"}, "unknown kernel"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--timing", dir.file("missing/t.csv")}, "t.csv"},
      {{"--kernel", "cpu-allpairs", "--dt", "0.1", "--timing", in2}, "has no column 'kernel'"},  // had run first
      {{"--kernel", "cpu-serial", "--level", "40", "--dt", "0.1"}, "level"},
  };
  if (!gpu::available()) cases.push_back({{"--kernel", "allpairs-tiled", "--dt", "0.1"}, "needs a CUDA GPU"});
  // --gpus: at least 1; above 1 only GPU near-field kernels, and only with GPUs.
  cases.push_back({{"--kernel", "cpu-allpairs", "--dt", "0.1", "--gpus", "0"}, "--gpus must be at least 1, not 0"});
  cases.push_back({{"--kernel", "bpb", "--level", "2", "--dt", "0.1", "--gpus", "-1"}, "--gpus must be at least 1"});
  cases.push_back({{"--kernel", "cpu-serial", "--level", "2", "--dt", "0.1", "--gpus", "2"}, "cpu-serial is a CPU kernel"});
  cases.push_back({{"--kernel", "cpu-omp-n3", "--level", "2", "--dt", "0.1", "--gpus", "3"}, "cpu-omp-n3 is a CPU kernel"});
  cases.push_back({{"--kernel", "cpu-allpairs", "--dt", "0.1", "--gpus", "2"}, "cpu-allpairs is a CPU kernel"});
  cases.push_back(
      {{"--kernel", "allpairs-tiled", "--dt", "0.1", "--gpus", "2"}, "allpairs-tiled is an all-pairs kernel"});
  cases.push_back({{"--kernel", "allpairs-naive", "--dt", "0.1", "--subsample", "2", "--gpus", "2"},
                   "allpairs-naive is an all-pairs kernel"});
  if (!gpu::available())
    cases.push_back({{"--kernel", "bpb", "--level", "2", "--dt", "0.1", "--gpus", "2"}, "--gpus 2 needs a CUDA GPU"});
  for (const Bad& b : cases) {
    std::vector<std::string> args = {"simulate"};
    args.insert(args.end(), base.begin(), base.end());
    args.insert(args.end(), b.args.begin(), b.args.end());
    const CliResult r = run_cli(args);
    CAPTURE(b.says);
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find(b.says) != std::string::npos, r.err);
    CHECK_FALSE(fs::exists(out));
  }
  const CliResult missing = run_cli({"simulate", "--input", dir.file("nope.csv"), "--kernel", "cpu-allpairs", "--dt",
                                     "0.1", "--steps", "3", "--output-dir", out});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("nope.csv") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("simulate --subsample k: every k-th source from a cycling offset, masses times k; its force error") {
  TempDir dir;
  const Particles p0 = make("plummer", 3, 203, 8);
  const double eps = 0.05;
  simulate_ok({"--input", write_input(dir, p0), "--kernel", "cpu-allpairs", "--precision", "double", "--softening",
               "0.05", "--dt", "0.01", "--steps", "3", "--snapshot-every", "1", "--subsample", "4", "--output-dir",
               dir.file("sub"), "--format", "bin"});
  const auto rows = energy_rows(dir, "sub");
  REQUIRE(rows.size() == 4);
  CHECK(read_text(dir.file("sub/energy.csv")).find(",subsampled,") != std::string::npos);
  for (std::uint64_t s : {0, 1, 2, 3}) {
    CAPTURE(s);
    const Particles p = snapshot(dir, "sub", s, "bin");
    std::vector<std::pair<std::size_t, double>> sources;
    for (std::size_t j = s % 4; j < p.size(); j += 4) sources.emplace_back(j, 4 * p.m[j]);
    const std::vector<double> approx = reference_acc(p, eps, -1, sources), exact = reference_acc(p, eps);
    double num = 0, den = 0;
    for (std::size_t i = 0; i < exact.size(); ++i) {
      num += (approx[i] - exact[i]) * (approx[i] - exact[i]);
      den += exact[i] * exact[i];
    }
    CHECK(rows[s].force_rel_error == doctest::Approx(std::sqrt(num / den)).epsilon(1e-9));
    CHECK(rows[s].force_rel_error > 0.01);  // an approximation, visibly
    // The potential stays the exact one.
    CHECK(rows[s].potential == doctest::Approx(reference_potential(p, eps)).epsilon(1e-12));
  }
  // The trajectory is the sub-sampled one: step 1 from step 0 with offset 0's forces.
  const Particles a = snapshot(dir, "sub", 0, "bin"), b = snapshot(dir, "sub", 1, "bin");
  std::vector<std::pair<std::size_t, double>> src0;
  for (std::size_t j = 0; j < a.size(); j += 4) src0.emplace_back(j, 4 * a.m[j]);
  const std::vector<double> acc0 = reference_acc(a, eps, -1, src0);
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double vx_half = a.vx[i] + acc0[i * 3] * 0.005;
    worst = std::max(worst, std::fabs(a.x[i] + vx_half * 0.01 - b.x[i]));
  }
  CHECK(worst <= 1e-14);
}

TEST_CASE("simulate --timing appends the cost of a step to a results file") {
  TempDir dir;
  const std::string in = write_input(dir, make("uniform", 2, 300, 4));
  simulate_ok({"--input", in, "--kernel", "cpu-omp", "--level", "3", "--dt", "0.001", "--steps", "5", "--output-dir",
               dir.file("t"), "--timing", dir.file("timing.csv")});
  const std::string csv = read_text(dir.file("timing.csv"));
  CHECK(csv.rfind("kernel,dim,level,ppb,n,input,precision,softening,dt,subsample,gpus,processes,steps,step_median_ms", 0) == 0);
  CHECK(csv.find("\ncpu-omp,2,3,4.6875,300,") != std::string::npos);
  CHECK(csv.find(",0.001,1,1,1,5,") != std::string::npos);  // dt, subsample, gpus, processes, steps
  CHECK(csv.find("beyond_forces_fraction") != std::string::npos);
}

TEST_CASE("simulate --gpus: refused without GPUs even when emulated; run.ini records gpus and --resume compares it") {
  TempDir dir;
  const std::string in = write_input(dir, make("uniform", 2, 60, 5));
  if (!gpu::available()) {
    // NEARFIELD_EMULATE_GPUS puts the parts on GPU 0: it still needs that GPU.
    EnvScope emulate("NEARFIELD_EMULATE_GPUS", "1");
    const CliResult r = run_cli({"simulate", "--input", in, "--kernel", "bpb", "--level", "2", "--dt", "0.01",
                                 "--steps", "2", "--gpus", "2", "--output-dir", dir.file("emulated")});
    CHECK(r.code == 2);
    CHECK_MESSAGE(r.err.find("--gpus 2 needs a CUDA GPU") != std::string::npos, r.err);
    CHECK_FALSE(fs::exists(dir.file("emulated")));
  }
  simulate_ok({"--input", in, "--kernel", "cpu-serial", "--level", "2", "--dt", "0.01", "--steps", "2",
               "--output-dir", dir.file("r")});
  const std::string ini = read_text(dir.file("r/run.ini"));
  CHECK(ini.find("\ngpus = 1\n") != std::string::npos);
  // A run.ini that says 2 GPUs is not continued on 1.
  std::string two = ini;
  two.replace(two.find("\ngpus = 1\n"), 10, "\ngpus = 2\n");
  write_text(dir.file("r/run.ini"), two);
  const CliResult r = run_cli({"simulate", "--kernel", "cpu-serial", "--level", "2", "--dt", "0.01", "--steps", "4",
                               "--output-dir", dir.file("r"), "--resume"});
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.err.find("--gpus 1 (the run has 2)") != std::string::npos, r.err);
  CHECK_FALSE(fs::exists(dir.file("r/snap_000004.csv")));
  // A run made before --gpus existed (no gpus line) ran on one GPU: it continues.
  std::string old = ini;
  old.erase(old.find("\ngpus = 1\n") + 1, 9);
  CHECK(old.find("gpus") == std::string::npos);
  write_text(dir.file("r/run.ini"), old);
  simulate_ok({"--kernel", "cpu-serial", "--level", "2", "--dt", "0.01", "--steps", "4", "--output-dir", dir.file("r"),
               "--resume"});
  CHECK(energy_rows(dir, "r").back().step == 4);
}
