// nearfield reproduce: the main job. Runs the experiments of the paper's reproduction, writes
// results/, records the operation-count model, and regenerates the report in paper/.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "cli/experiment.h"
#include "io/output_file.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "measure/model.h"

namespace nf::cli {

const std::vector<std::string>& reproduce_experiments() {
  static const std::vector<std::string> names = {"table3",     "newton3",       "newton3-3d", "depth",
                                                 "ppb",        "nonuniform",    "nonuniform-2d", "validation",
                                                 "validation-large", "validation-extreme"};
  return names;
}
namespace {

// The operation-count model (Tables I and II) for the report: 2D level 7 at the paper's P, and
// 3D level 5 for comparison, as dim,level,ppb,key,value rows.
void write_model(const std::string& results_dir) {
  create_output_folder((std::filesystem::path(results_dir) / "model").string());
  std::string text = "dim,level,ppb,key,value\n";
  auto add = [&](int dim, int level, std::uint64_t ppb) {
    std::istringstream lines(model_report(operation_model(dim, level, ppb)));
    for (std::string line; std::getline(lines, line);) {
      const auto colon = line.find(": ");
      text += std::to_string(dim) + "," + std::to_string(level) + "," + std::to_string(ppb) + "," + line.substr(0, colon) +
              "," + line.substr(colon + 2) + "\n";
    }
  };
  for (std::uint64_t p = 8; p <= 512; p *= 2) add(2, 7, p);
  for (std::uint64_t p = 8; p <= 512; p *= 4) add(3, 5, p);
  write_output_file((std::filesystem::path(results_dir) / "model" / "model.csv").string(), text);
}

// A python3 that has matplotlib (the one on PATH may not: pyenv, venvs).
std::string find_python() {
  for (const char* candidate : {"python3", "/usr/bin/python3", "/usr/local/bin/python3"}) {
    const std::string cmd = std::string(candidate) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return candidate;
  }
  return "";
}

// The --only list, every name checked (UsageError naming the valid ones).
std::vector<std::string> selected(const std::string& only) {
  const std::vector<std::string>& all = reproduce_experiments();
  std::vector<std::string> out;
  if (only.empty()) return all;
  std::string names;
  for (const std::string& n : all) names += (names.empty() ? "" : ", ") + n;
  std::stringstream ss(only);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    if (std::find(all.begin(), all.end(), item) == all.end())
      throw UsageError("--only: unknown experiment '" + item + "' (experiments: " + names + ")");
    out.push_back(item);
  }
  if (out.empty()) throw UsageError("--only: no experiment named (experiments: " + names + ")");
  return out;
}

}  // namespace

int cmd_reproduce(const Args& args, std::ostream& out, std::ostream& err) {
  std::string experiments = "experiments", results = "results", paper = "paper", only;
  bool reduced = false, no_report = false;
  int threads = 0;
  po::options_description d("reproduce options");
  d.add_options()("help", "this help")("experiments", po::value(&experiments)->default_value(experiments), "folder of the .ini files")(
      "results", po::value(&results)->default_value(results), "results folder")(
      "paper", po::value(&paper)->default_value(paper), "report folder (make_report.py lives there)")(
      "reduced", po::bool_switch(&reduced), "the reduced CPU scale even with a GPU")(
      "only", po::value(&only), "comma list of experiments to run (default: all of them)")(
      "no-report", po::bool_switch(&no_report), "do not regenerate the report");
  add_threads_option(d, threads);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield reproduce [--results results] [--paper paper] [--reduced] [--only a,b] "
                  "[--threads T]\n\nRuns "
                  "experiments/{table3,newton3,newton3-3d,depth,ppb,nonuniform,nonuniform-2d,validation,validation-large,\n"
                  "validation-extreme}.ini (full scale with a CUDA GPU, the CPU "
                  "kernels at a reduced scale without one), then paper/make_report.py."))
    return 0;
  const std::vector<std::string> names = selected(only);
  apply_threads(threads);
  if (!gpu::available() && !reduced) {
    out << "no CUDA GPU (" << gpu::unavailable_reason() << "): running the CPU kernels at a reduced scale\n";
    reduced = true;
  }
  if (!no_report) {
    check_output_folder(paper);  // the report's README and figures go there
    // Its script, before the experiments: a wrong --paper (or the default run outside the
    // repository) had failed only after every point had run.
    const std::string script = (std::filesystem::path(paper) / "make_report.py").string();
    if (!std::filesystem::is_regular_file(script))
      throw InputError(script, 0, "not found: --paper names the report folder that holds make_report.py (paper/ of "
                                  "the repository), or give --no-report");
  }
  std::vector<ExperimentRun> runs;
  for (const std::string& name : names) {
    ExperimentRun r;
    r.ini = (std::filesystem::path(experiments) / (name + ".ini")).string();
    r.results_dir = results;
    r.reduced = reduced;
    r.threads = threads;
    r.check_only = true;
    run_experiment(r, out, err);  // every file checked before the first one runs
    r.check_only = false;
    runs.push_back(r);
  }
  const std::string python = no_report ? "" : find_python();
  if (!no_report && python.empty())
    throw UsageError("no python3 with matplotlib found to draw the report (install Debian package python3-matplotlib)");
  write_model(results);
  int status = 0;
  for (const ExperimentRun& r : runs) {
    const std::string name = experiment_name(r.ini);
    out << "\n== " << name << (reduced ? " (reduced scale)" : "") << "\n";
    const int code = run_experiment(r, out, err);
    // A validation FAIL is a result (the report shows and explains it), not a failed run.
    if (code == 1 && name.rfind("validation", 0) == 0)
      out << "note: some " << name << " points FAIL their tolerance; see the validation section of the report\n";
    else
      status = std::max(status, code);
  }
  if (no_report) return status;
  // The report runs this very binary for the numbers it computes (bench --list, forces, compare);
  // rebuilt during the run, the file at its path is the new binary ("... (deleted)" is the old one).
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string deleted = " (deleted)";
  if (self.size() > deleted.size() && self.compare(self.size() - deleted.size(), deleted.size(), deleted) == 0)
    self.resize(self.size() - deleted.size());
  const auto quoted = [](const std::string& arg) {  // for the shell: 'arg', with ' as '\''
    std::string q = "'";
    for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string cmd = python + " " + quoted((std::filesystem::path(paper) / "make_report.py").string()) +
                          " --results " + quoted(results) + " --paper " + quoted(paper) + " --nearfield " + quoted(self);
  out << "\n== report: " << cmd << "\n" << std::flush;
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("the report script failed: " + cmd);
  return status;
}

}  // namespace nf::cli
