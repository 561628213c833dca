#pragma once
//! The `nearfield` command line. Every subcommand is a function taking its arguments and two
//! streams, so tests run commands in-process. Exit codes: 0 success, 1 a validation FAILed,
//! 2 bad usage or bad input (the message names the problem), 3 a runtime failure (CUDA, I/O).

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "ic/generate.h"
#include "core/particles.h"
#include "methods/registry.h"
#include "methods/run_checks.h"

namespace nf::cli {

using Args = std::vector<std::string>;

//! `nearfield <command> [options]`: args[0] is the command.
int run(const Args& args, std::ostream& out, std::ostream& err);

int cmd_generate(const Args& args, std::ostream& out, std::ostream& err);
int cmd_tree(const Args& args, std::ostream& out, std::ostream& err);
int cmd_forces(const Args& args, std::ostream& out, std::ostream& err);
int cmd_validate(const Args& args, std::ostream& out, std::ostream& err);
int cmd_bench(const Args& args, std::ostream& out, std::ostream& err);
int cmd_model(const Args& args, std::ostream& out, std::ostream& err);
int cmd_experiment(const Args& args, std::ostream& out, std::ostream& err);
int cmd_reproduce(const Args& args, std::ostream& out, std::ostream& err);
//! The experiments `reproduce` runs (experiments/NAME.ini), in order.
const std::vector<std::string>& reproduce_experiments();
int cmd_compare(const Args& args, std::ostream& out, std::ostream& err);
int cmd_convert(const Args& args, std::ostream& out, std::ostream& err);
int cmd_render(const Args& args, std::ostream& out, std::ostream& err);
int cmd_simulate(const Args& args, std::ostream& out, std::ostream& err);

// --- shared option handling -----------------------------------------------------------------------
namespace po = boost::program_options;

//! Where the particles come from: a file, or a generator.
struct InputArgs {
  std::string input;
  std::string input_format;      //!< empty: by the extension of input
  std::string dist = "uniform";  //!< comma list in sweeps; one name elsewhere
  std::string dim = "2";         //!< comma list in sweeps; one value elsewhere
  std::string n, ppb;            //!< lists in sweeps ("8,16,32"); single values elsewhere
  std::uint64_t seed = 1;
  std::string mass = "equal";
  int clusters = 4;
  double jitter = 0.0;
};

//! --input and --input-format (unless `with_input` is false) and the generator options (--dist --dim --n --ppb --seed
//! --mass --clusters --jitter).
void add_input_options(po::options_description& d, InputArgs& a, bool with_input = true);
//! Refuses contradictory or invalid generator options before any work: --n with --ppb, a
//! negative --n, --ppb below 1, a non-integer list item (UsageError/InputError naming the option).
void check_input_args(const InputArgs& a);

//! The particles of one input point: the file, or the generator (a.dist and a.dim single
//! values) with this n or (level, ppb).
Particles load_input(const InputArgs& a, std::int64_t n, int level, std::int64_t ppb);
//! The generator options of `a` (single dist and dim) with this n or (level, ppb).
GenerateOptions generator_options(const InputArgs& a, std::int64_t n, int level, std::int64_t ppb);

//! Parses "8,16,32" into integers (InputError naming `option` on a bad item, or on one below `min`
//! or above `max`).
std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option,
                                         std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                                         std::int64_t max = std::numeric_limits<std::int64_t>::max());
//! Exactly one integer from a list option.
std::int64_t single_int(const std::string& text, const std::string& option,
                        std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                        std::int64_t max = std::numeric_limits<std::int64_t>::max());
//! The largest --level passed on: up to it check_level refuses a level past the dimension's limit
//! (2D 31, 3D 21: 64-bit keys) in its own words; a larger value is refused as it was typed, before
//! it could wrap around in an int (4294967296 had run as level 0).
inline constexpr std::int64_t kLevelOptionMax = 64;
//! An option whose value is a count from 0 to the largest `Count` (at most 2^63 - 1), parsed from
//! its text into `target` when the options are notified (Boost's own parse of an unsigned option
//! turns "-1" into 4294967295).
template <class Count>
po::typed_value<std::string>* count_option(Count& target, const std::string& option) {
  constexpr std::int64_t most = std::numeric_limits<Count>::max() > std::uint64_t(std::numeric_limits<std::int64_t>::max())
                                    ? std::numeric_limits<std::int64_t>::max()
                                    : std::int64_t(std::numeric_limits<Count>::max());
  return po::value<std::string>()
      ->default_value(std::to_string(target))
      ->notifier([&target, option](const std::string& text) { target = Count(single_int(text, option, 0, most)); });
}

//! --threads N: the CPU threads of OpenMP kernels (0: OpenMP's default, OMP_NUM_THREADS or one
//! per core).
void add_threads_option(po::options_description& d, int& threads);
//! Sets the OpenMP thread count of the kernels that follow (0 restores the default).
void apply_threads(int threads);
//! The most --threads accepts.
inline constexpr int kMaxThreads = 4096;
//! A note on `err` naming the `kernels` that --threads, when given, does not change (a one-thread
//! CPU kernel or a GPU kernel): the option then sets only the threads of the CPU work around them.
void note_threads(const po::variables_map& vm, const std::vector<std::string>& kernels, std::ostream& err);

//! Refuses a value of an option of type double that boost read although this project's parser
//! does not (a number that underflows to 0, such as 1e-400, which boost reads as 0).
void check_double_options(const po::parsed_options& parsed, const po::variables_map& vm);

//! Parses args with `desc`; returns false after printing --help. Throws po errors, and
//! check_generator_options' and check_double_options' refusals.
bool parse_args(const Args& args, const po::options_description& desc, po::variables_map& vm, std::ostream& out,
                const std::string& usage);

//! Refuses generator options that no input would read: any of --dist --dim --seed --mass
//! --clusters --jitter given with --input, --clusters without the clusters distribution, --jitter
//! without the lattice (UsageError naming the option).
void check_generator_options(const po::variables_map& vm);

//! Fixed-width text table.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

//! --order-sample's help, `targets` naming where the M targets come from ("sampled targets", ...).
std::string order_sample_help(const std::string& targets);

}  // namespace nf::cli
