#include "cli/experiment.h"

#include <filesystem>
#include <fstream>

#include "cli/sweep.h"
#include "common/errors.h"
#include "harness/context.h"

namespace nf::cli {

std::string experiment_name(const std::string& ini) { return std::filesystem::path(ini).stem().string(); }

int run_experiment(const ExperimentRun& r, std::ostream& out, std::ostream& err) {
  std::ifstream file(r.ini);
  if (!file) throw InputError(r.ini, 0, "cannot open experiment file");
  // First pass: every key, so the [reduced] section can become overrides.
  const po::parsed_options raw = po::parse_config_file(file, po::options_description(), true);
  Args args = r.overrides;
  if (r.reduced)
    for (const po::option& o : raw.options)
      if (o.string_key.rfind("reduced.", 0) == 0 && !o.value.empty())
        args.push_back("--" + o.string_key.substr(8) + "=" + o.value[0]);

  SweepConfig c;
  std::string mode = "bench", description;
  po::options_description d("experiment keys");
  d.add_options()("mode", po::value(&mode), "bench, validate or tree")("description", po::value(&description), "what it measures");
  add_sweep_options(d, c, SweepMode::experiment);
  po::options_description reduced("[reduced] overrides");
  for (const auto& opt : d.options()) reduced.add_options()(("reduced." + opt->long_name()).c_str(), po::value<std::string>());

  po::variables_map vm;
  po::store(po::command_line_parser(args).options(d).run(), vm);  // overrides first: they win
  std::ifstream again(r.ini);
  po::options_description all;
  all.add(d).add(reduced);
  try {
    po::store(po::parse_config_file(again, all, false), vm);
  } catch (const po::error& e) {
    throw InputError(r.ini, 0, e.what());
  }
  po::notify(vm);

  c.resume = true;
  c.label = experiment_name(r.ini);
  c.output = r.output;
  if (c.output.empty()) {
    const std::filesystem::path dir = std::filesystem::path(r.results_dir) / c.label;
    std::filesystem::create_directories(dir);
    c.output = (dir / (device_slug() + ".csv")).string();
  } else if (std::filesystem::path(c.output).has_parent_path()) {
    std::filesystem::create_directories(std::filesystem::path(c.output).parent_path());
  }
  err << "experiment " << c.label << (r.reduced ? " (reduced scale)" : "") << ": " << description << "\n  results: "
      << c.output << "\n";
  if (mode == "bench") return run_bench(c, out, err);
  if (mode == "validate") return run_validate(c, out, err);
  if (mode == "tree") {
    c.tree = true;
    return run_bench(c, out, err);
  }
  throw InputError(r.ini, 0, "mode must be bench, validate or tree, not '" + mode + "'");
}

int cmd_experiment(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help") {
    out << "usage: nearfield experiment experiments/NAME.ini [--results-dir DIR] [--output FILE] [--reduced] "
           "[any sweep option, overriding the file]\n\nThe file holds the same keys as the command line (level = 7, "
           "ppb = 8,16,..., kernel = bpb,bpb-n3, ...) and mode = bench | validate | tree; results go to "
           "DIR/NAME/<device>.csv and a rerun skips the rows already there.\n";
    return args.empty() ? 2 : 0;
  }
  ExperimentRun r;
  r.ini = args[0];
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& name) {
      if (a.rfind(name + "=", 0) == 0) return a.substr(name.size() + 1);
      if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
      return args[++i];
    };
    if (a == "--results-dir" || a.rfind("--results-dir=", 0) == 0)
      r.results_dir = value("--results-dir");
    else if (a == "--output" || a.rfind("--output=", 0) == 0)
      r.output = value("--output");
    else if (a == "--reduced")
      r.reduced = true;
    else
      r.overrides.push_back(a);
  }
  return run_experiment(r, out, err);
}

}  // namespace nf::cli
