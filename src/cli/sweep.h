#pragma once
//! The sweeps behind `bench`, `validate` and `experiment` (docs/design.md §5-§8): their options,
//! the parsing of the option lists, and the commands' entry points. A sweep runs points (dim x
//! dist x level x n or ppb) x precisions x kernels x spreads, one table row and one results row
//! per measurement; the engine that does so is cli/sweep_engine.h.

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/particles.h"
#include "distributed/cross_pairs.h"

namespace nf::cli {

//! The options a sweep takes; the same keys on the command line and in experiments/*.ini.
struct SweepConfig {
  InputArgs in;
  std::string levels;                 //!< --level: comma list
  std::string domain;                 //!< --domain
  std::string precisions = "float";   //!< --precision: comma list
  std::string kernels;                //!< --kernel: comma list (empty: all available)
  std::string mask = "all";           //!< --mask for all-pairs kernels in bench
  double softening = 1e-4;
  int reps = 10, warmup = 2;          //!< GPU kernels (and CPU ones unless overridden)
  int cpu_reps = -1, cpu_warmup = -1; //!< CPU kernels (-1: as reps/warmup)
  std::size_t cpu_reference_limit = 20000;
  std::string output;                 //!< results CSV to append to
  bool resume = false;                //!< skip points already in `output`
  bool remeasure = false;             //!< measure points already in `output` again, replacing their rows
  std::string scale;                  //!< "full" or "reduced" in experiments (recorded in every row)
  bool tree = false;                  //!< bench: time the tree build instead of kernels
  std::string label;                  //!< progress prefix (experiment name)
  std::string gpus = "1";             //!< --gpus: comma list; above 1 for the GPU near-field kernels (distributed/)
  std::string cross_pairs = "auto";   //!< --cross-pairs: comma list of auto, once, twice (multi-GPU runs)
  // Full methods (kFarField: near field plus far field, docs/design.md §16).
  std::string orders = "0";           //!< --order: comma list of expansion orders (0: from --accuracy)
  double accuracy = 0;                //!< --accuracy: target relative L2 error (0: the default)
  std::string near;                   //!< --near: the near-field kernel of their direct part
  std::uint32_t leaf_size = 0;        //!< --leaf-size: the adaptive full methods' S (0: automatic)
  std::uint32_t order_sample = 0;     //!< --order-sample M: the order measured at M targets (0: the model's)
  // validate: compare M sampled targets only (docs/design.md §4).
  std::string sample;                 //!< --sample M: empty: every particle
};

//! The items of a comma list, empty ones dropped; a list given with no item at all ("," for
//! example) is refused, naming `option` (when one is given).
std::vector<std::string> split_list(const std::string& text, const std::string& option = "");

//! The kernels a sweep runs: --kernel, or every kernel this machine can run (with --gpus above 1:
//! every GPU near-field kernel).
std::vector<std::string> sweep_kernels(const SweepConfig& c);
//! The --gpus list (each at least 1).
std::vector<int> parse_gpus(const SweepConfig& c);
//! The --cross-pairs list.
std::vector<CrossPairs> parse_cross_pairs_list(const SweepConfig& c);
//! The --precision list (UsageError when empty).
std::vector<Precision> parse_precisions(const SweepConfig& c);
//! The --order list (each 0..20).
std::vector<int> parse_orders(const SweepConfig& c);
//! --sample: 0 when not given, else an integer M >= 1 (InputError naming --sample otherwise).
std::int64_t parse_sample(const SweepConfig& c);
//! True when a point of n particles is validated on a sample: --sample M with M < n (M >= n
//! validates every particle, as without --sample).
bool sampled(const SweepConfig& c, std::size_t n);

//! Which options a command takes: bench (timing), validate (reference), experiment (both).
enum class SweepMode { bench, validate, experiment };
//! Adds the sweep options of `mode` to `d`.
void add_sweep_options(po::options_description& d, SweepConfig& c, SweepMode mode);

//! --level: a comma list of levels >= 0, each an integer or "auto" (kAutoLevel, resolved per
//! input; refused with --ppb, where the level defines the input).
std::vector<std::int64_t> parse_levels(const SweepConfig& c);

//! Times every (point, precision, kernel); prints a table; appends rows to c.output.
int run_bench(const SweepConfig& c, std::ostream& out, std::ostream& err);
//! Validates every (point, precision, kernel); exits 1 if any FAILs.
int run_validate(const SweepConfig& c, std::ostream& out, std::ostream& err);

}  // namespace nf::cli
