#pragma once
// Shared test helpers: temporary files, in-process CLI runs and the results files they write,
// random inputs, bitwise comparison, environment variables, and the visible skip of GPU tests
// without a device.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "ic/generate.h"
#include "core/gpu_runtime.h"
#include "core/particles.h"
#include "core/random.h"
#include "measure/results.h"

namespace nf::test {

inline std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

//! Bitwise equality of two double arrays (so -0.0 and NaN payloads count).
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (bits_of(a[i]) != bits_of(b[i])) return false;
  return true;
}

//! A fresh directory under /tmp, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "nearfield-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

//! Result of running `nearfield ...` in-process.
struct CliResult {
  int code;
  std::string out, err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

//! The rows of a CSV file (a results file), each split into its fields.
inline std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) rows.push_back(split_csv_line(line));
  return rows;
}

//! Runs a command that must succeed and returns the rows of the results file it wrote to.
inline std::vector<std::vector<std::string>> rows_after(const std::vector<std::string>& args,
                                                        const std::string& results) {
  const CliResult r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return csv_rows(results);
}

//! The index of column `name` in a header row (fails the test when it is missing).
inline std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  REQUIRE(it != header.end());
  return static_cast<std::size_t>(it - header.begin());
}

//! Generated particles with random masses (so wrong-index bugs cannot hide behind equal masses).
inline Particles make(const std::string& dist, int dim, std::int64_t n, std::uint64_t seed = 7) {
  GenerateOptions g;
  g.dist = dist;
  g.dim = dim;
  g.n = n;
  g.seed = seed;
  g.mass = "random";
  return generate(g);
}

inline Particles make_exact(int dim, int level, std::int64_t ppb, std::uint64_t seed = 7) {
  GenerateOptions g;
  g.dist = "uniform-exact";
  g.dim = dim;
  g.level = level;
  g.ppb = ppb;
  g.seed = seed;
  g.mass = "random";
  return generate(g);
}

//! Particles from explicit coordinates (z ignored in 2D), masses random in [0.5, 1.5).
inline Particles from_points(int dim, const std::vector<std::vector<double>>& pts, std::uint64_t seed = 3) {
  Particles p;
  p.dim = dim;
  Random r(seed);
  for (const auto& q : pts) {
    p.x.push_back(q[0]);
    p.y.push_back(q[1]);
    if (dim == 3) p.z.push_back(q[2]);
    p.m.push_back(r.uniform(0.5, 1.5));
  }
  return p;
}

//! Sets (or with a null value unsets) an environment variable for the life of the scope, then
//! puts back what was there.
class EnvScope {
 public:
  //! Records the variable's value, to be put back at scope exit; `set` changes it meanwhile.
  explicit EnvScope(std::string name) : name_(std::move(name)) {
    const char* old = std::getenv(name_.c_str());
    had_ = old != nullptr;
    if (had_) old_ = old;
  }
  EnvScope(std::string name, const char* value) : EnvScope(std::move(name)) { set(value); }
  ~EnvScope() { set(had_ ? old_.c_str() : nullptr); }
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;
  void set(const char* value) {
    if (value) ::setenv(name_.c_str(), value, 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

//! True when the GPU tests can run here; otherwise records why (or fails if a GPU is required).
inline bool gpu_or_skip() {
  if (gpu::available()) return true;
  if (gpu::required_by_environment()) FAIL("NEARFIELD_REQUIRE_GPU=1 but " << gpu::unavailable_reason());
  MESSAGE("skipped: " << gpu::unavailable_reason());
  return false;
}

}  // namespace nf::test
