// nearfield simulate on the GPU: every GPU kernel's device-resident run against the float64 CPU
// run of the same forces (all pairs: cpu-allpairs; near field: cpu-serial at the same level; full
// methods: cpu-fmm at the same level and order),
// the sub-sample, bitwise --resume of deterministic kernels, the energy check in float32, --timing.
#include <filesystem>

#include "methods/registry.h"
#include "helpers.h"
#include "sim_checks.h"

using namespace nf;
using namespace nf::test;

namespace {

std::vector<std::string> run_args(const std::string& in, const std::string& dir, const std::string& kernel,
                                  const std::string& precision, int level, const std::string& steps,
                                  std::vector<std::string> more = {}) {
  std::vector<std::string> a = {"--input", in, "--kernel", kernel, "--precision", precision, "--softening", "0.05",
                                "--dt", "0.0078125", "--steps", steps, "--snapshot-every", "4", "--output-dir", dir,
                                "--format", "bin"};
  if (level >= 0) a.insert(a.end(), {"--level", std::to_string(level)});
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace

TEST_CASE("GPU simulate: every GPU kernel follows the float64 CPU run of its forces" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  TempDir dir;
  const Particles p0 = make("plummer", 3, 1500, 12);
  io::write_particles(dir.file("in.bin"), p0);
  const int level = 3;
  simulate_ok(run_args(dir.file("in.bin"), dir.file("cpu-all"), "cpu-allpairs", "double", -1, "8"));
  simulate_ok(run_args(dir.file("in.bin"), dir.file("cpu-near"), "cpu-serial", "double", level, "8"));
  const std::vector<std::string> order = {"--order", "8"};
  simulate_ok(run_args(dir.file("in.bin"), dir.file("cpu-full"), "cpu-fmm", "double", level, "8", order));
  // The adaptive methods at one leaf size: their automatic sizes follow each device's rates.
  const std::vector<std::string> adaptive = {"--order", "8", "--leaf-size", "40"};
  simulate_ok(run_args(dir.file("in.bin"), dir.file("cpu-adaptive"), "cpu-fmm-adaptive", "double", level, "8", adaptive));
  const Particles ref_all = snapshot(dir, "cpu-all", 8, "bin"), ref_near = snapshot(dir, "cpu-near", 8, "bin"),
                  ref_full = snapshot(dir, "cpu-full", 8, "bin"), ref_adaptive = snapshot(dir, "cpu-adaptive", 8, "bin");
  const auto rows_all = energy_rows(dir, "cpu-all"), rows_near = energy_rows(dir, "cpu-near"),
             rows_full = energy_rows(dir, "cpu-full"), rows_adaptive = energy_rows(dir, "cpu-adaptive");
  CHECK(max_position_diff(p0, ref_all) > 1e-3);
  for (const KernelInfo* k : kernels_with(kGpu)) {
    CAPTURE(k->name);
    const std::string run = "gpu-" + k->name;
    const bool full = k->far_field();
    const int k_level = k->near_field() || full ? level : -1;
    const std::vector<std::string> more = k->adaptive() ? adaptive : full ? order : std::vector<std::string>{};
    simulate_ok(run_args(dir.file("in.bin"), dir.file(run), k->name, "float", k_level, "8", more));
    const Particles got = snapshot(dir, run, 8, "bin");
    // A full method follows its CPU twin: fmm cpu-fmm, fmm-adaptive cpu-fmm-adaptive.
    const Particles& ref = k->adaptive() ? ref_adaptive : full ? ref_full : k->near_field() ? ref_near : ref_all;
    CHECK(max_position_diff(got, ref) <= 2e-6);
    CHECK(max_velocity_diff(got, ref) <= 2e-5);
    const auto rows = energy_rows(dir, run);
    const auto& ref_rows = k->adaptive() ? rows_adaptive : full ? rows_full : k->near_field() ? rows_near : rows_all;
    REQUIRE(rows.size() == ref_rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
      CHECK(rows[r].potential == doctest::Approx(ref_rows[r].potential).epsilon(1e-5));
      CHECK(rows[r].kinetic == doctest::Approx(ref_rows[r].kinetic).epsilon(1e-5));
    }
    // In double precision the GPU run is the CPU run up to summation order.
    const std::string run64 = "gpu64-" + k->name;
    simulate_ok(run_args(dir.file("in.bin"), dir.file(run64), k->name, "double", k_level, "8", more));
    CHECK(max_position_diff(snapshot(dir, run64, 8, "bin"), ref) <= 1e-12);
    CHECK(energy_rows(dir, run64).back().potential == doctest::Approx(ref_rows.back().potential).epsilon(1e-12));
  }
}

TEST_CASE("GPU simulate --subsample follows the CPU sub-sample" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  TempDir dir;
  io::write_particles(dir.file("in.bin"), make("plummer", 3, 1001, 6));
  simulate_ok(run_args(dir.file("in.bin"), dir.file("cpu"), "cpu-allpairs", "double", -1, "8", {"--subsample", "3"}));
  simulate_ok(run_args(dir.file("in.bin"), dir.file("gpu"), "allpairs-tiled", "float", -1, "8", {"--subsample", "3"}));
  CHECK(max_position_diff(snapshot(dir, "gpu", 8, "bin"), snapshot(dir, "cpu", 8, "bin")) <= 2e-6);
  const auto cpu = energy_rows(dir, "cpu"), gpu = energy_rows(dir, "gpu");
  REQUIRE(cpu.size() == gpu.size());
  for (std::size_t r = 0; r < cpu.size(); ++r)
    CHECK(gpu[r].force_rel_error == doctest::Approx(cpu[r].force_rel_error).epsilon(1e-3));
}

TEST_CASE("GPU simulate --resume is bitwise for deterministic kernels from the snapshot grid" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  TempDir dir;
  io::write_particles(dir.file("in.bin"), make("plummer", 3, 777, 2));
  for (const KernelInfo* k : kernels_with(kGpu | kDeterministic)) {
    CAPTURE(k->name);
    const int level = k->near_field() ? 2 : -1;
    const std::string whole = "whole-" + k->name, part = "part-" + k->name, off = "off-" + k->name;
    simulate_ok(run_args(dir.file("in.bin"), dir.file(whole), k->name, "float", level, "10"));
    // Stopped at step 8, on the grid of --snapshot-every 4: the same run, bit for bit.
    simulate_ok(run_args(dir.file("in.bin"), dir.file(part), k->name, "float", level, "8"));
    simulate_ok(run_args(dir.file("in.bin"), dir.file(part), k->name, "float", level, "10", {"--resume"}));
    CHECK(read_text(dir.file(part + "/snap_000010.bin")) == read_text(dir.file(whole + "/snap_000010.bin")));
    // Stopped at step 5, off the grid: near-field kernels keep the particles in their tree's order
    // between snapshot steps, so sums run in another order than after the resume: equal to rounding.
    simulate_ok(run_args(dir.file("in.bin"), dir.file(off), k->name, "float", level, "5"));
    simulate_ok(run_args(dir.file("in.bin"), dir.file(off), k->name, "float", level, "10", {"--resume"}));
    const Particles a = snapshot(dir, off, 10, "bin"), b = snapshot(dir, whole, 10, "bin");
    CHECK(max_position_diff(a, b) <= 1e-6);
    if (!k->near_field()) CHECK(read_text(dir.file(off + "/snap_000010.bin")) == read_text(dir.file(whole + "/snap_000010.bin")));
  }
}

TEST_CASE("GPU simulate: energy check in float32 all pairs (Plummer 1024, eps 0.05, dt 1/128, 128 steps)" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  TempDir dir;
  io::write_particles(dir.file("in.bin"), plummer(3, 1024, 11));
  simulate_ok(run_args(dir.file("in.bin"), dir.file("e"), "allpairs-tiled", "float", -1, "128",
                       {"--timing", dir.file("timing.csv")}));
  const Particles a = snapshot(dir, "e", 0, "bin"), b = snapshot(dir, "e", 128, "bin");
  const double e0 = reference_kinetic(a) + reference_potential(a, 0.05);
  const double e1 = reference_kinetic(b) + reference_potential(b, 0.05);
  MESSAGE("GPU float32 all pairs: |dE/E| after 128 steps " << std::fabs((e1 - e0) / e0));
  CHECK(std::fabs((e1 - e0) / e0) <= 5e-5);
  // energy.csv's float32 pair terms move E by about 1e-7 relative, mostly the same at both ends.
  CHECK(std::fabs(energy_rows(dir, "e").back().rel_energy_error - (e1 - e0) / std::fabs(e0)) <= 1e-6);
  CHECK(read_text(dir.file("timing.csv")).find("\nallpairs-tiled,3,,,1024,") != std::string::npos);
}

TEST_CASE("GPU simulate: the potential of a large run is evaluated on the GPU and agrees with float64" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  TempDir dir;
  const Particles p0 = make("plummer", 3, 20501, 3);  // above the CPU-potential limit of 20000
  io::write_particles(dir.file("in.bin"), p0);
  const double all = reference_potential(p0, 0.05), near = reference_potential(p0, 0.05, 3);
  for (const char* precision : {"float", "double"}) {
    CAPTURE(precision);
    const double tol = std::string(precision) == "float" ? 1e-6 : 1e-12;
    for (const char* kernel : {"allpairs-tiled", "bpb", "n3-shfl", "fmm"}) {  // fmm: the full potential
      CAPTURE(kernel);
      const std::string name = kernel;
      const bool near_field = name != "allpairs-tiled" && name != "fmm";
      const std::string run = name + "-" + precision;
      simulate_ok(run_args(dir.file("in.bin"), dir.file(run), kernel, precision, name != "allpairs-tiled" ? 3 : -1, "0"));
      CHECK(read_text(dir.file(run + "/energy.csv")).find("; GPU, pair terms in " + std::string(precision)) !=
            std::string::npos);
      CHECK(energy_rows(dir, run)[0].potential == doctest::Approx(near_field ? near : all).epsilon(tol));
    }
  }
}
