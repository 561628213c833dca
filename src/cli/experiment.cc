#include "cli/experiment.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "cli/sweep_checks.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "io/input_path.h"
#include "io/output_file.h"
#include "measure/context.h"

namespace nf::cli {
namespace {

// The keys of an experiment file: mode, description, the sweep options and --threads.
struct ExperimentKeys {
  SweepConfig sweep;
  std::string mode = "bench", description;
  int threads = 0;
  po::options_description options{"experiment keys (in the file, or --KEY VALUE on the command line)"};
  ExperimentKeys() {
    options.add_options()("mode", po::value(&mode)->default_value(mode), "bench, validate or tree")(
        "description", po::value(&description), "what it measures (printed when it starts)");
    add_sweep_options(options, sweep, SweepMode::experiment);
    add_threads_option(options, threads);
  }
};

// A word between percent signs ("%value%"). program_options writes its error messages by
// replacing such words with the option, the value or the line, and loops forever when what it
// puts in holds the word again (fuzzing found `%canonical_option%n = 1` and a bad line holding
// `%invalid_line%` hanging `nearfield experiment`).
bool has_placeholder(const std::string& s) {
  for (std::size_t a = s.find('%'); a != std::string::npos; a = s.find('%', a + 1)) {
    const std::size_t b = s.find('%', a + 1);
    if (b == std::string::npos) return false;
    if (b > a + 1 && std::all_of(s.begin() + a + 1, s.begin() + b, [](char c) { return std::islower(c) || c == '_'; }))
      return true;
  }
  return false;
}

// Every key = value line of the file, none interpreted yet. A line holding a word between percent
// signs (see has_placeholder), a section header without its ']' or a line without '=' is an
// InputError naming the file (the first with its line, before program_options sees the text).
// `seen`: each "key" or "section.key" and its line.
std::vector<po::option> file_lines(const std::string& ini, const std::string& text, const po::options_description& keys,
                                   std::map<std::string, long>& seen) {
  std::istringstream in(text);
  long number = 0;
  std::string section;
  for (std::string line; std::getline(in, line);) {
    if (++number, has_placeholder(line))
      throw InputError(ini, number, "a word between percent signs is not allowed in an experiment file: " + line);
    // program_options' own messages name no line ("option 'n' cannot be specified more than
    // once", "invalid line"): the lines it would refuse are refused here first, with theirs.
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t[0] == '[') {
      if (t.back() != ']') throw InputError(ini, number, "a section header without its ']': " + t);
      section = trim(t.substr(1, t.size() - 2));
      if (section != "reduced")
        throw InputError(ini, number, "unknown section [" + section + "]: an experiment file holds its keys and an "
                         "optional [reduced] section");
      continue;
    }
    const std::size_t eq = t.find('=');
    if (eq == std::string::npos) throw InputError(ini, number, "not a 'key = value' line: " + t);
    const std::string name = trim(t.substr(0, eq)), key = (section.empty() ? "" : section + ".") + name;
    if (name.empty()) throw InputError(ini, number, "a line without a key before its '=': " + t);
    const po::option_description* known = nullptr;
    try {  // an empty or odd name can match many options (fuzzing: ' = 4' threw ambiguous_option)
      known = keys.find_nothrow(name, false);
    } catch (const po::error&) {
    }
    if (!known)
      throw InputError(ini, number, (section.empty() ? "" : "[" + section + "]: ") + "unknown key '" + name +
                       "' (nearfield experiment --help lists the keys)");
    // An empty value had read as "not given" (`dist =` ran no point and said so with exit 0).
    if (const std::string value = trim(t.substr(eq + 1)); value.empty() || value[0] == '#')
      throw InputError(ini, number, "'" + name + "' has no value");
    if (const auto [at, fresh] = seen.emplace(key, number); !fresh)
      throw InputError(ini, number, "'" + key + "' is given twice (first on line " + std::to_string(at->second) + ")");
  }
  std::istringstream file(text);
  try {
    return po::parse_config_file(file, po::options_description(), true).options;
  } catch (const po::error& e) {
    throw InputError(ini, 0, e.what());
  }
}

// The [reduced] section as "--key=value" options, leaving out the keys the command line gives.
Args reduced_options(const std::vector<po::option>& lines, const std::set<std::string>& given) {
  Args args;
  for (const po::option& o : lines)
    if (o.string_key.rfind("reduced.", 0) == 0 && !o.value.empty() && !given.count(o.string_key.substr(8)))
      args.push_back("--" + o.string_key.substr(8) + "=" + o.value[0]);
  return args;
}

bool has_reduced_section(const std::vector<po::option>& lines) {
  for (const po::option& o : lines)
    if (o.string_key.rfind("reduced.", 0) == 0) return true;
  return false;
}

}  // namespace

std::string sweep_summary(const SweepConfig& c) {
  std::string s = c.in.input.empty() ? c.in.dim + "D " + c.in.dist : c.in.input;
  s += c.tree ? ", tree build" : ", kernels " + (c.kernels.empty() ? std::string("all available") : c.kernels);
  s += ", level " + c.levels;
  if (!c.in.ppb.empty()) s += ", P = " + c.in.ppb;
  if (!c.in.n.empty()) s += ", N = " + c.in.n;
  s += ", " + c.precisions;
  if (c.orders != "0") s += ", order " + c.orders;
  if (c.order_sample != 0) s += ", order measured at " + std::to_string(c.order_sample) + " targets";
  if (c.accuracy != 0) s += ", accuracy " + format_double(c.accuracy);
  if (c.gpus != "1") s += ", GPUs " + c.gpus;
  return s;
}

std::string experiment_name(const std::string& ini) { return std::filesystem::path(ini).stem().string(); }

ExperimentSettings parse_experiment(const ExperimentRun& r, const std::string& text) {
  ExperimentKeys keys;
  SweepConfig& c = keys.sweep;
  bool reduced = r.reduced;
  std::map<std::string, long> key_lines;  // "section.key" -> its line
  const std::vector<po::option> lines = file_lines(r.ini, text, keys.options, key_lines);
  const bool has_reduced = has_reduced_section(lines);
  if (reduced && !has_reduced) throw UsageError("--reduced: " + r.ini + " has no [reduced] section");
  const bool auto_reduced = !reduced && has_reduced && !gpu::available();
  reduced = reduced || auto_reduced;

  // Precedence: the command line, then [reduced] (when applied), then the file's main section.
  // program_options keeps the first value stored for a key, so they are stored in that order.
  const po::parsed_options cli = po::command_line_parser(r.overrides).options(keys.options).run();
  for (const po::option& o : cli.options)  // a second file name had been dropped without a word
    if (o.string_key.empty() || o.position_key >= 0)
      throw UsageError("experiment runs one file; '" + (o.original_tokens.empty() ? std::string() : o.original_tokens[0]) +
                       "' is neither a --KEY option nor its value");
    else if (o.value.size() == 1 && o.value[0].empty())
      throw UsageError("--" + o.string_key + ": an empty value");
  std::set<std::string> given;
  for (const po::option& o : cli.options) given.insert(o.string_key);
  po::variables_map vm;
  po::store(cli, vm);
  check_double_options(cli, vm);
  if (reduced) {
    try {
      const po::parsed_options red = po::command_line_parser(reduced_options(lines, given)).options(keys.options).run();
      po::store(red, vm);
      check_double_options(red, vm);
    } catch (const po::error& e) {
      throw InputError(r.ini, 0, std::string("[reduced]: ") + e.what());
    } catch (const UsageError& e) {
      throw InputError(r.ini, 0, std::string("[reduced]: ") + e.what());
    }
  }
  po::options_description all;
  po::options_description section("[reduced] keys");
  for (const auto& opt : keys.options.options())
    section.add_options()(("reduced." + opt->long_name()).c_str(), po::value<std::string>());
  all.add(keys.options).add(section);
  std::istringstream file(text);
  try {
    const po::parsed_options parsed = po::parse_config_file(file, all, false);
    po::store(parsed, vm);
    check_double_options(parsed, vm);
  } catch (const po::error& e) {
    throw InputError(r.ini, 0, e.what());
  } catch (const UsageError& e) {
    throw InputError(r.ini, 0, e.what());
  }
  po::notify(vm);

  if (c.resume && c.remeasure)
    throw UsageError("--resume keeps the rows already in the results file and --remeasure replaces them: give one");
  c.resume = !c.remeasure;  // an experiment resumes unless told to measure again
  c.label = experiment_name(r.ini);
  c.scale = reduced ? "reduced" : "full";
  if (keys.mode == "tree")
    c.tree = true;
  else if (keys.mode != "bench" && keys.mode != "validate")
    throw InputError(r.ini, 0, "mode must be bench, validate or tree, not '" + keys.mode + "'");
  if (keys.mode == "validate")  // they had been accepted and dropped: validate runs each point once
    for (const char* k : {"reps", "warmup", "cpu-reps", "cpu-warmup", "mask"})
      if (vm.count(k) && !vm[k].defaulted())
        throw UsageError(std::string(k) + " applies to mode = bench; mode = validate runs each point once over every pair");
  if (!c.sample.empty() && keys.mode != "validate")
    throw UsageError("sample (validation on sampled targets) applies to mode = validate, not " + keys.mode);
  bool reduced_description = false;
  for (const po::option& o : lines) reduced_description = reduced_description || o.string_key == "reduced.description";
  return {c, keys.mode, keys.description, keys.threads, reduced, auto_reduced, reduced && reduced_description, key_lines};
}

int run_experiment(const ExperimentRun& r, std::ostream& out, std::ostream& err) {
  check_input_path(r.ini);  // a folder had reached the reader (exit 3, a library message)
  std::ifstream file(r.ini);
  if (!file) throw InputError(r.ini, 0, "cannot open experiment file");
  std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // a UTF-8 byte-order mark: not part of the first key
  ExperimentSettings keys = parse_experiment(r, text);
  SweepConfig& c = keys.sweep;
  const bool reduced = keys.reduced, auto_reduced = keys.auto_reduced;
  if (c.output.empty()) c.output = r.output;
  const bool default_output = c.output.empty();
  if (default_output) c.output = (std::filesystem::path(r.results_dir) / c.label / (device_slug() + ".csv")).string();
  // Everything else is checked before the results folder is made: a refused run leaves nothing.
  const std::string output = c.output;
  c.output.clear();
  // "--n: '1000x' is not an integer" from a key of the file names the file and its line.
  const auto at_line = [&](const std::string& what) -> long {
    const std::size_t colon = what.find(':');
    if (what.rfind("--", 0) != 0 || colon == std::string::npos) return 0;
    const std::string option = what.substr(0, colon);
    for (const std::string& a : r.overrides)
      if (a.rfind(option, 0) == 0) return 0;  // the command line's
    // The line that sets the key for this run: [reduced] first where it applies.
    const std::string key = option.substr(2);
    const auto in_reduced = keys.key_lines.find("reduced." + key), in_main = keys.key_lines.find(key);
    if (reduced && in_reduced != keys.key_lines.end()) return in_reduced->second;
    return in_main != keys.key_lines.end() ? in_main->second : 0;
  };
  const auto name_line = [&](const std::exception& e) {
    if (const long line = at_line(e.what())) throw InputError(r.ini, line, std::string(e.what()).substr(2));
  };
  try {
    check_sweep(c, keys.mode == "validate");
  } catch (const UsageError& e) {
    name_line(e);
    throw;
  } catch (const InputError& e) {
    name_line(e);
    throw;
  }
  const std::string folder = std::filesystem::path(output).parent_path().string();
  if (!folder.empty()) check_output_folder(folder);
  if (r.check_only) return 0;
  c.output = output;
  if (auto_reduced)
    out << "no CUDA GPU (" << gpu::unavailable_reason() << "): " << c.label << " runs its [reduced] section\n";
  // Removed again, while it holds no file, when the run is refused or fails (a refusal found only
  // at a point, softening = -1 say, had left an empty results folder).
  MadeFolder made(folder);
  check_output_path(c.output);  // the folder exists now: the results file itself, before any work
  apply_threads(keys.threads ? keys.threads : r.threads);
  // The description is the file's (its full scale, unless [reduced] has one of its own); the
  // line under it is what this run measures, from the keys in force.
  err << "experiment " << c.label << (reduced ? " (reduced scale)" : "") << ": " << keys.description
      << (reduced && !keys.reduced_description ? " (at full scale)" : "") << "\n  this run: " << sweep_summary(c)
      << "\n  results: " << c.output << "\n";
  const int status = keys.mode == "validate" ? run_validate(c, out, err) : run_bench(c, out, err);
  made.keep();
  return status;
}

int cmd_experiment(const Args& args, std::ostream& out, std::ostream& err) {
  const std::string usage =
      "usage: nearfield experiment experiments/NAME.ini [--results-dir DIR] [--reduced] [--KEY VALUE ...]\n\n"
      "Runs the sweep the file describes. The file holds the keys below (level = 7, ppb = 8,16,..., kernel = "
      "bpb,bpb-n3, ...) and an optional [reduced] section of keys for machines without a GPU: it is applied with "
      "--reduced, and without a usable GPU on its own (one line says so). Keys given on the command line replace "
      "the file's, [reduced] ones included. Results go to DIR/NAME/<device>.csv (or --output); a rerun skips the "
      "rows already there, --remeasure measures them again and replaces them.";
  const bool help = std::find(args.begin(), args.end(), "--help") != args.end();
  if (args.empty() || help || args[0] == "-h") {
    ExperimentKeys keys;
    po::options_description own("experiment options");
    own.add_options()("results-dir", po::value<std::string>()->default_value("results"), "results folder")(
        "reduced", "apply the file's [reduced] section (the default without a GPU)")("help", "this help");
    (args.empty() ? err : out) << usage << "\n\n" << own << "\n" << keys.options << "\n";
    return args.empty() ? 2 : 0;
  }
  ExperimentRun r;
  r.ini = args[0];
  // "experiment --results-dir res t.ini" had said "--results-dir: cannot open file".
  if (r.ini.rfind("--", 0) == 0)
    throw UsageError("experiment takes its file first: nearfield experiment FILE.ini [--results-dir DIR] [--reduced] "
                     "[--KEY VALUE ...] (the first argument is '" + r.ini + "')");
  bool results_dir_given = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--results-dir" || a.rfind("--results-dir=", 0) == 0) {
      // Given twice, the last had won without a word; empty, the results had gone to ./NAME.
      if (results_dir_given) throw UsageError("--results-dir is given twice");
      results_dir_given = true;
      if (a != "--results-dir")
        r.results_dir = a.substr(14);
      else if (i + 1 < args.size())
        r.results_dir = args[++i];
      else
        throw UsageError("--results-dir needs a value");
      if (r.results_dir.empty()) throw UsageError("--results-dir: an empty value");
    } else if (a == "--reduced") {
      r.reduced = true;
    } else {
      r.overrides.push_back(a);
    }
  }
  return run_experiment(r, out, err);
}

}  // namespace nf::cli
