// The sweep options (docs/design.md §5) and the parsing of their comma lists.
#include "cli/sweep.h"

#include <algorithm>
#include <sstream>

#include "core/errors.h"
#include "distributed/spread_method.h"
#include "farfield/multi_index.h"
#include "methods/auto_level.h"
#include "methods/registry.h"

namespace nf::cli {

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    // An item listed twice had been measured twice, its rows appended twice.
    if (!option.empty() && std::find(out.begin(), out.end(), item) != out.end())
      throw UsageError("--" + option + ": '" + item + "' is listed twice");
    out.push_back(item);
  }
  // "," or ",,": a list given with nothing in it (it had run no point and reported success).
  if (out.empty() && !text.empty() && !option.empty())
    throw UsageError("--" + option + ": no value in '" + text + "'");
  return out;
}

// --level: a comma list of levels, each an integer or "auto" (kAutoLevel, resolved per input).
std::vector<std::int64_t> parse_levels(const SweepConfig& c) {
  std::vector<std::int64_t> out;
  for (const std::string& item : split_list(c.levels, "level")) {
    if (item != "auto") {
      for (std::int64_t v : parse_int_list(item, "level", 0, kLevelOptionMax)) out.push_back(v);
    } else if (!c.in.ppb.empty()) {
      throw UsageError("--level auto needs --input or --n: with --ppb the level defines the input");
    } else {
      out.push_back(kAutoLevel);
    }
  }
  return out;
}

std::vector<std::string> sweep_kernels(const SweepConfig& c) {
  const std::vector<int> gpus = parse_gpus(c);
  if (!c.kernels.empty() || std::none_of(gpus.begin(), gpus.end(), [](int g) { return g > 1; }))
    return parse_kernel_list(c.kernels);
  std::vector<std::string> names;
  for (const KernelInfo* k : kernels_with(kGpu | kNearField)) names.push_back(k->name);
  return names;
}

std::vector<int> parse_gpus(const SweepConfig& c) {
  std::vector<int> out;
  for (std::int64_t g : parse_int_list(c.gpus, "gpus", 1)) out.push_back(static_cast<int>(g));
  return out;
}

std::vector<CrossPairs> parse_cross_pairs_list(const SweepConfig& c) {
  std::vector<CrossPairs> out;
  for (const std::string& item : split_list(c.cross_pairs, "cross-pairs")) out.push_back(parse_cross_pairs(item));
  if (out.empty()) throw UsageError("--cross-pairs: nothing given");
  return out;
}

std::vector<Precision> parse_precisions(const SweepConfig& c) {
  std::vector<Precision> out;
  for (const std::string& item : split_list(c.precisions, "precision")) out.push_back(parse_precision(item));
  if (out.empty()) throw UsageError("--precision: no precision given");
  return out;
}

std::vector<int> parse_orders(const SweepConfig& c) {
  std::vector<int> out;
  // 0..kMaxOrder here, so that a bad order in a list is refused before the first point runs
  for (std::int64_t p : parse_int_list(c.orders, "order", 0, farfield::kMaxOrder)) out.push_back(static_cast<int>(p));
  return out;
}

std::int64_t parse_sample(const SweepConfig& c) {
  if (c.sample.empty()) return 0;
  try {
    return single_int(c.sample, "sample", 1);
  } catch (const InputError& e) {
    throw UsageError(std::string(e.what()) + ": --sample takes the number of target particles, an integer >= 1");
  }
}

bool sampled(const SweepConfig& c, std::size_t n) {
  const std::int64_t m = parse_sample(c);
  return m > 0 && static_cast<std::uint64_t>(m) < n;
}

void add_sweep_options(po::options_description& d, SweepConfig& c, SweepMode mode) {
  const std::string gpus_help =
      std::string("GPUs of this host to spread each GPU near-field kernel over, comma list (1,2): one process drives "
                  "them, halo particles move through NCCL (README \"Several GPUs\")") +
      emulate_gpus_help();
  add_input_options(d, c.in);
  d.add_options()
      ("kernel", po::value(&c.kernels), "kernels, comma-separated (default: every kernel this machine can run)")
      ("level", po::value(&c.levels),
       mode == SweepMode::validate
           ? "tree level(s) K, comma-separated, or auto (the rule of README \"Choosing the level\"); default auto"
           : "tree level(s) K, comma-separated, or auto (the rule of README \"Choosing the level\")")
      ("domain", po::value(&c.domain), "x0,y0[,z0],side (default: smallest square/cube from the positions)")
      ("softening", po::value(&c.softening)->default_value(c.softening), "softening length eps >= 0")
      ("precision", po::value(&c.precisions)->default_value(c.precisions), "float, double, or float,double")
      ("output", po::value(&c.output), "results CSV to append rows to (created with a header)")
      ("resume", po::bool_switch(&c.resume), "skip points whose rows are already in --output")
      ("remeasure", po::bool_switch(&c.remeasure), "measure points already in --output again and replace their rows")
      ("gpus", po::value(&c.gpus)->default_value(c.gpus),
       gpus_help.c_str())
      ("cross-pairs", po::value(&c.cross_pairs)->default_value(c.cross_pairs),
       "on several GPUs, pairs across two GPUs' parts: once (Newton-3 kernels: computed on one side, counterforces "
       "sent back), twice (computed on both sides), auto (once for Newton-3 kernels that are not deterministic); comma "
       "list")
      ("order", po::value(&c.orders)->default_value(c.orders),
       "full methods (cpu-fmm, fmm): the expansions' orders p, comma list of 1..20 (0: from --accuracy)")
      ("accuracy", po::value(&c.accuracy)->default_value(c.accuracy),
       "full methods: the target relative L2 error that picks the order (0: 1e-4)")
      ("near", po::value(&c.near), "full methods: the near-field kernel of the direct part (default: the device's)")
      ("leaf-size", count_option(c.leaf_size, "leaf-size"),
       "adaptive full methods (cpu-fmm-adaptive, fmm-adaptive): a box is split while it holds more than this many particles "
      "(0: automatic, from the order and the device; docs/design.md §16)")
      ("order-sample", count_option(c.order_sample, "order-sample"),
       order_sample_help("sampled targets of each input").c_str());
  if (mode != SweepMode::bench)
    d.add_options()("cpu-reference-limit", count_option(c.cpu_reference_limit, "cpu-reference-limit"),
                    "largest N whose ground truth is cpu-allpairs (above: allpairs-tiled on the GPU)")
        ("sample", po::value(&c.sample),
         "validate only M targets drawn with --seed, against a float64 sum over every source on the CPU (for N "
         "where the full reference is too slow); M >= N validates every particle");
  if (mode != SweepMode::validate)
    d.add_options()
        ("mask", po::value(&c.mask)->default_value(c.mask), "all-pairs kernels: all or near")
        ("reps", po::value(&c.reps)->default_value(c.reps), "timed runs per point (median, min, max reported)")
        ("warmup", po::value(&c.warmup)->default_value(c.warmup), "untimed runs first (with any, they go on for at least 50 ms)")
        ("cpu-reps", po::value(&c.cpu_reps)->default_value(c.cpu_reps), "timed runs of CPU kernels (-1: --reps)")
        ("cpu-warmup", po::value(&c.cpu_warmup)->default_value(c.cpu_warmup), "warm-up runs of CPU kernels (-1: --warmup)")
        ("tree", po::bool_switch(&c.tree), "time the GPU tree build (stages + a bare CUB sort) instead of kernels");
}

}  // namespace nf::cli
