#include "cli/commands.h"
#include "cli/sweep.h"

#include <algorithm>
#include <cstdio>
#include <new>
#include <sstream>

#include <omp.h>

#include "io/csv_file.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "core/version.h"
#include "io/input_path.h"
#include "io/output_file.h"
#include "methods/auto_level.h"
#include "tree/tree.h"
#include "methods/registry.h"
#include "nearfield/cpu_simd.h"
#include "io/particle_file.h"
#include "distributed/spread_method.h"
#include "distributed/nccl_transport.h"

namespace nf::cli {

namespace {
struct Command {
  const char* name;
  int (*fn)(const Args&, std::ostream&, std::ostream&);
  const char* summary;
};
const Command kCommands[] = {
    {"generate", cmd_generate, "write a particle distribution to a file (csv, tipsy, tab, bin)"},
    {"tree", cmd_tree, "build the tree/octree of a file and print its summary"},
    {"forces", cmd_forces, "compute near-field (or all-pairs) accelerations with one kernel"},
    {"validate", cmd_validate, "check kernels against the float64 all-pairs ground truth"},
    {"bench", cmd_bench, "time kernels (or the GPU tree build) over a sweep"},
    {"model", cmd_model, "the paper's Table I/II operation counts at a level and P"},
    {"experiment", cmd_experiment, "run a sweep described by experiments/NAME.ini (resumable)"},
    {"reproduce", cmd_reproduce, "the main job: rerun the paper's experiments and regenerate paper/"},
    {"compare", cmd_compare, "relative L2 and largest difference of two acceleration files"},
    {"convert", cmd_convert, "convert a particle file between csv, tipsy, tab and bin"},
    {"render", cmd_render, "draw a log-scaled surface density picture (PNG) of a particle file"},
    {"simulate", cmd_simulate, "leapfrog time steps with any kernel: snapshots, energy.csv, frames (resumable)"},
};

void usage(std::ostream& out) {
  out << "usage: nearfield <command> [options]   (nearfield <command> --help for its options)\n\ncommands:\n";
  for (const Command& c : kCommands) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-10s %s\n", c.name, c.summary);
    out << line;
  }
  out << "\nnearfield --version prints the version and the git commit it was built from.\n";
}

// True when an option naming a single output file (--output, --timing) names standard output
// (`-`): the command's messages then go to standard error, so the data stays clean
// (docs/design.md §6).
bool data_on_standard_output(const Args& args) {
  for (std::size_t i = 0; i < args.size(); ++i)
    for (const std::string option : {"--output", "--timing"}) {
      if (args[i] == option && i + 1 < args.size() && writes_to_standard_output(args[i + 1])) return true;
      if (args[i].rfind(option + "=", 0) == 0 && writes_to_standard_output(args[i].substr(option.size() + 1)))
        return true;
    }
  return false;
}

void version(std::ostream& out) {
  out << "nearfield " << project_version() << ", git commit " << git_commit() << ", "
#ifdef NF_HAVE_CUDA
      << "with CUDA kernels\n";
#else
      << "CPU-only build (no CUDA kernels)\n";
#endif
  // cpu-simd: the instruction sets compiled, those this CPU runs, and the one the kernels use.
  if (simd_kernels_built()) {
    const auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    std::string chosen;
    try {
      chosen = simd_target();
    } catch (const std::exception& e) {
      chosen = e.what();
    }
    out << "cpu-simd: compiled for " << join(simd_targets_compiled()) << "; this CPU runs "
        << join(simd_targets_supported()) << "; in use: " << chosen << "\n";
  } else {
    out << "cpu-simd: not built (no Google Highway at configure time)\n";
  }
  // Several GPUs: whether this build can, and which libnccl a run would load (README "Several GPUs").
  if (emulating_gpus())
    out << "multi-GPU (--gpus): emulated, NEARFIELD_EMULATE_GPUS=1: every part on GPU 0, no NCCL (timings "
           "meaningless)\n";
  if (!nccl_compiled()) {
    out << "multi-GPU (--gpus): not built (no nccl.h at configure time)\n";
    return;
  }
  std::string nccl;
  try {
    nccl = load_nccl() + ", " + std::to_string(gpu::device_count()) + " CUDA devices";
  } catch (const std::exception& e) {
    nccl = std::string("unavailable: ") + e.what();
  }
  out << "multi-GPU (--gpus): " << nccl << "\n";
}
}  // namespace

int run(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(args.empty() ? err : out);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    version(out);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (args[0] != c.name) continue;
    const Args rest(args.begin() + 1, args.end());
    try {
      return c.fn(rest, data_on_standard_output(rest) ? err : out, err);
    } catch (const InputError& e) {
      err << "nearfield " << c.name << ": error: " << e.what() << "\n";
      return 2;
    } catch (const UsageError& e) {
      err << "nearfield " << c.name << ": error: " << e.what() << "\n";
      return 2;
    } catch (const po::error& e) {
      err << "nearfield " << c.name << ": error: " << e.what() << " (see nearfield " << c.name << " --help)\n";
      return 2;
    } catch (const std::bad_alloc&) {  // had printed "failed: std::bad_alloc"
      err << "nearfield " << c.name << ": failed: out of host memory (an allocation failed: a smaller input, "
          << "level or --threads, or a machine with more memory)\n";
      return 3;
    } catch (const std::exception& e) {
      err << "nearfield " << c.name << ": failed: " << e.what() << "\n";
      return 3;
    }
  }
  err << "nearfield: unknown command '" << args[0] << "'\n";
  usage(err);
  return 2;
}

void add_input_options(po::options_description& d, InputArgs& a, bool with_input) {
  if (with_input)
    d.add_options()
        ("input", po::value(&a.input), "particle file (.csv, .tipsy/.std, .tab/.dat/.txt, .bin); else a generated input")
        ("input-format", po::value(&a.input_format), "format of --input when its extension does not say: csv, tipsy, tab, bin");
  d.add_options()
      ("dist", po::value(&a.dist)->default_value(a.dist), "generated distribution: uniform, uniform-fast, uniform-exact, plummer, clusters, mixed, lattice, shell, core, corners, galaxies (comma list in sweeps)")
      ("dim", po::value(&a.dim)->default_value(a.dim), "generated dimension, 2 or 3 (comma list in sweeps)")
      ("n", po::value(&a.n), "generated particle count (comma list in sweeps)")
      ("ppb", po::value(&a.ppb), "generated particles per box at --level: N = 4^K P (2D), 8^K P (3D) (comma list in sweeps)")
      ("seed", count_option(a.seed, "seed"), "generator seed (0 .. 2^63 - 1)")
      ("mass", po::value(&a.mass)->default_value(a.mass), "generated masses: equal (1/N) or random ([0.5,1.5)/N)")
      ("clusters", po::value(&a.clusters)->default_value(a.clusters), "clusters: number of Plummer spheres")
      ("jitter", po::value(&a.jitter)->default_value(a.jitter), "lattice: random displacement, fraction of the spacing");
}

void check_input_args(const InputArgs& a) {
  if (!a.n.empty() && !a.ppb.empty())
    throw UsageError("--n and --ppb exclude each other: give --n N, or --level K with --ppb P (N = boxes x P)");
  split_list(a.dist, "dist");  // "," alone: refused
  if (!a.n.empty()) parse_int_list(a.n, "n", 0);
  if (!a.ppb.empty()) parse_int_list(a.ppb, "ppb", 1);
  if (!a.input.empty() && (!a.n.empty() || !a.ppb.empty()))
    throw UsageError("--input reads the particles; --n and --ppb describe a generated input: give one or the other");
  if (!a.input.empty()) check_input_path(a.input);  // readable, and a file: before any work
}

GenerateOptions generator_options(const InputArgs& a, std::int64_t n, int level, std::int64_t ppb) {
  check_input_args(a);
  if (a.dist.find(',') != std::string::npos) throw UsageError("--dist takes one distribution here, not '" + a.dist + "'");
  GenerateOptions g;
  g.dist = a.dist;
  g.dim = static_cast<int>(single_int(a.dim, "dim"));
  g.seed = a.seed;
  g.mass = a.mass;
  g.clusters = a.clusters;
  g.jitter = a.jitter;
  if (ppb >= 0) {
    g.level = level;
    g.ppb = ppb;
  } else if (n >= 0) {
    g.n = n;
  }
  return g;
}

Particles load_input(const InputArgs& a, std::int64_t n, int level, std::int64_t ppb) {
  if (!a.input.empty()) return io::read_particles(a.input, a.input_format);
  if (ppb < 0 && n < 0) throw UsageError("give --input FILE, or a generated input with --n N or --ppb P");
  return generate(generator_options(a, n, level, ppb));
}

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option, std::int64_t min,
                                         std::int64_t max) {
  std::vector<std::int64_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    std::int64_t v = 0;
    if (!parse_int64(item, v)) throw InputError("--" + option + ": '" + item + "' " + parse_failure(item, true));
    if (v < min)
      throw InputError("--" + option + ": " + item + " is not a valid value (at least " + std::to_string(min) + ")");
    if (v > max)
      throw InputError("--" + option + ": " + item + " is not a valid value (at most " + std::to_string(max) + ")");
    // A value listed twice had been measured twice, its rows appended twice.
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw InputError("--" + option + ": " + item + " is listed twice");
    out.push_back(v);
  }
  if (out.empty()) throw InputError("--" + option + ": no value given");
  return out;
}

std::int64_t single_int(const std::string& text, const std::string& option, std::int64_t min, std::int64_t max) {
  const auto v = parse_int_list(text, option, min, max);
  if (v.size() != 1) throw InputError("--" + option + " takes one value here, not '" + text + "'");
  return v[0];
}

void add_threads_option(po::options_description& d, int& threads) {
  std::string kernels;
  for (const KernelInfo& k : all_kernels())
    if (k.openmp()) kernels += (kernels.empty() ? "" : ", ") + k.name;
  d.add_options()("threads", po::value(&threads)->default_value(threads),
                  ("CPU threads of the OpenMP kernels (" + kernels +
                   ") and of the CPU work around any kernel (generating the input, the CPU tree build); 0: "
                   "OpenMP's default (OMP_NUM_THREADS, else one per core)")
                      .c_str());
}

void note_threads(const po::variables_map& vm, const std::vector<std::string>& kernels, std::ostream& err) {
  if (!vm.count("threads") || vm["threads"].defaulted()) return;
  std::string unchanged;
  int count = 0;
  for (const std::string& name : kernels) {
    const KernelInfo& k = find_kernel(name);
    if (!k.openmp())
      unchanged += (count++ ? ", " : "") + k.name + (k.gpu() ? " (GPU)" : " (one thread)");
  }
  if (!unchanged.empty())  // said, not dropped without a word
    err << "note: --threads " << vm["threads"].as<int>() << " does not change " << unchanged
        << "; it sets the threads of the CPU work around " << (count > 1 ? "them" : "it") << " (generating the input, the CPU tree build)\n";
}

void apply_threads(int threads) {
  static const int initial = omp_get_max_threads();  // the default, before any --threads
  if (threads < 0) throw UsageError("--threads: " + std::to_string(threads) + " is not a valid value (at least 0)");
  // Far past any machine's cores; 100000 had crashed in the OpenMP runtime (SIGSEGV), 40000 exited 1.
  if (threads > kMaxThreads)
    throw UsageError("--threads: " + std::to_string(threads) + " is not a valid value (at most " +
                     std::to_string(kMaxThreads) + ")");
  omp_set_num_threads(threads > 0 ? threads : initial);
}

bool parse_args(const Args& args, const po::options_description& desc, po::variables_map& vm, std::ostream& out,
                const std::string& usage) {
  const po::parsed_options parsed = po::command_line_parser(args).options(desc).run();
  // A word that is neither an option nor its value had been dropped without a word (`validate
  // --kernel cpu-serial ... cpu-omp` validated cpu-serial alone and said "all kernels PASS"), and
  // an empty value had read as "not given" (`--input ""` validated a generated input instead).
  for (const po::option& o : parsed.options) {
    if (o.string_key.empty() || o.position_key >= 0)
      throw UsageError("unexpected argument '" + (o.original_tokens.empty() ? std::string() : o.original_tokens[0]) +
                       "': every value follows its --option (lists are comma-separated: --kernel a,b)");
    if (o.value.size() == 1 && o.value[0].empty())
      throw UsageError("--" + o.string_key + ": an empty value");
  }
  po::store(parsed, vm);
  check_double_options(parsed, vm);
  if (vm.count("help")) {
    out << usage << "\n\n" << desc << "\n";
    return false;
  }
  po::notify(vm);
  check_generator_options(vm);
  return true;
}

void check_double_options(const po::parsed_options& parsed, const po::variables_map& vm) {
  // boost reads a number that underflows (--softening 1e-400) as 0 without a word; this project's
  // own parser (core/numbers.h) refuses it, in files and in options of type double alike.
  for (const po::option& o : parsed.options) {
    const auto* d = vm.count(o.string_key) ? boost::any_cast<double>(&vm[o.string_key].value()) : nullptr;
    double x = 0;
    if (d && o.value.size() == 1 && !parse_double(o.value[0], x))
      throw UsageError("--" + o.string_key + " " + o.value[0] + " " + parse_failure(o.value[0], false));
  }
}

void check_generator_options(const po::variables_map& vm) {
  auto given = [&](const char* name) { return vm.count(name) && !vm[name].defaulted(); };
  // Options no input reads are refused, not dropped (a user's --dim 2 with a 3D file had run 3D).
  if (given("input"))
    for (const char* g : {"dist", "dim", "seed", "mass", "clusters", "jitter"})
      if (given(g) && !(std::string(g) == "seed" && given("sample")))  // --sample draws its targets with --seed
        throw UsageError(std::string("--") + g + " describes a generated input; --input reads the particles: give one "
                         "or the other");
  if (!vm.count("dist")) return;
  const std::vector<std::string> dists = split_list(vm["dist"].as<std::string>(), "dist");
  auto uses = [&](const char* d) { return std::find(dists.begin(), dists.end(), d) != dists.end(); };
  if (given("clusters") && !uses("clusters"))
    throw UsageError("--clusters is the clusters distribution's count of spheres; --dist " + vm["dist"].as<std::string>() +
                     " has none");
  if (given("jitter") && !uses("lattice"))
    throw UsageError("--jitter displaces the lattice distribution's points; --dist " + vm["dist"].as<std::string>() +
                     " has none");
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> width;
  for (const auto& r : rows_)
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  for (const auto& r : rows_) {
    std::string line;
    for (std::size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

std::string order_sample_help(const std::string& targets) {
  return "full methods without --order: choose the order by measuring the error at M " + targets +
         " against float64 sums (from the error table's order, the lowest order tried whose bound is within "
         "--accuracy; docs/design.md §16); 0: from the error model";
}


}  // namespace nf::cli
