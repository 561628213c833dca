// nearfield forces: one kernel, accelerations written in input order with ids.
#include <memory>

#include "cli/commands.h"
#include "io/particle_file.h"
#include "cli/long_run.h"
#include "io/output_file.h"
#include "io/csv_file.h"
#include "core/errors.h"
#include "methods/auto_level.h"
#include "methods/force_method.h"
#include "measure/order_search.h"
#include "distributed/process_group.h"
#include "distributed/spread_method.h"

namespace nf::cli {

int cmd_forces(const Args& args, std::ostream& out, std::ostream& err) {
  InputArgs in;
  std::string level, kernel, domain, output, precision = "float", mask = "all";
  double softening = 1e-4;
  int threads = 0, gpus = 1, order = 0;
  std::uint32_t leaf_size = 0, order_sample = 0;
  double accuracy = 0;
  std::string near;
  std::string cross_pairs = "auto";
  bool round_inputs = false;
  const std::string gpus_help = std::string(
                                    "GPUs of this host to spread a GPU near-field kernel over (one process, halo "
                                    "particles through NCCL; README \"Several GPUs\")") +
                                emulate_gpus_help();
  po::options_description d("forces options");
  d.add_options()("help", "this help")("kernel", po::value(&kernel)->required(), "kernel name (see nearfield bench --list)")(
      "level", po::value(&level), "tree level K (required by near-field and full-method kernels, --mask near and generated --ppb inputs), or auto: least near-field pairs + a per-box overhead (README)")(
      "softening", po::value(&softening)->default_value(softening), "softening length eps >= 0")(
      "precision", po::value(&precision)->default_value(precision), "float or double arithmetic")(
      "mask", po::value(&mask)->default_value(mask), "all-pairs kernels: all or near")(
      "round-inputs", po::bool_switch(&round_inputs),
      "all-pairs kernels: round positions and masses to float32 first, then compute (box membership still from the "
      "float64 coordinates): the reference a float32 kernel is validated against")(
      "domain", po::value(&domain), "x0,y0[,z0],side (default: smallest square/cube from the positions)")(
      "output", po::value(&output)->required(), "CSV to write: id,ax,ay[,az] in input order")(
      "gpus", po::value(&gpus)->default_value(gpus),
      gpus_help.c_str())(
      "order", po::value(&order)->default_value(order),
      "full methods (cpu-fmm, fmm): the expansions' order p, 1..20 (0: from --accuracy)")(
      "accuracy", po::value(&accuracy)->default_value(accuracy),
      "full methods: the target relative L2 error that picks the order (0: 1e-4)")(
      "near", po::value(&near), "full methods: the near-field kernel of the direct part (default: the device's)")(
      "leaf-size", count_option(leaf_size, "leaf-size"),
      "adaptive full methods (cpu-fmm-adaptive, fmm-adaptive): a box is split while it holds more than this many particles "
      "(0: automatic, from the order and the device; docs/design.md §16)")(
      "order-sample", count_option(order_sample, "order-sample"), order_sample_help("sampled targets").c_str())(
      "cross-pairs", po::value(&cross_pairs)->default_value(cross_pairs),
      "with --gpus above 1: once (Newton-3 kernels compute a pair across two GPUs on one of them and send the "
      "counterforce back), twice (both GPUs compute it), auto (once for Newton-3 kernels that are not deterministic)");
  add_input_options(d, in);
  add_threads_option(d, threads);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield forces --input FILE.csv --kernel NAME [--level K] [--softening EPS] "
                  "[--precision float|double] [--mask all|near] [--domain ...] [--threads T] [--gpus G] "
                  "--output ACC.csv"))
    return 0;
  check_output_path(output, in.input);
  // A particle format's name (acc.bin, acc.tipsy) had been given CSV content without a word.
  if (const auto f = io::known_file_format(output); f && *f != io::FileFormat::csv)
    throw UsageError("--output " + output + ": forces writes CSV (id,ax,ay[,az]), not the ." + io::extension_of(output) +
                     " particle format; name the file .csv");
  check_input_args(in);
  const KernelInfo& k = find_kernel(kernel);
  check_kernels_runnable({k.name});
  check_gpus(k, gpus);
  const Spread spread{gpus, parse_cross_pairs(cross_pairs)};
  check_cross_pairs_used(cross_pairs, gpus > 1 || process_count() > 1);
  if (gpus > 1) resolve_cross_pairs(k, spread.cross);  // refuses once for a kernel without Newton-3
  MethodSetup s;
  s.precision = parse_precision(precision);
  s.mask = parse_mask(mask);
  s.softening = softening;
  s.round_inputs_to_float = round_inputs;
  s.order = order;
  s.accuracy = accuracy;
  s.near = near;
  s.leaf_size = leaf_size;
  s.order_sample = order_sample;
  if (order_sample != 0 && (!k.far_field() || order != 0))  // before any work (check_setup says why)
    check_setup(k, s);
  if (round_inputs && k.uses_tree())
    throw UsageError("--round-inputs applies to the all-pairs kernels (the references), not to " + k.name);
  // All-pairs kernels over every pair need no tree, hence no level.
  const bool needs_level = k.uses_tree() || s.mask == Mask::near || !in.ppb.empty();
  if (needs_level && level.empty())
    throw UsageError(std::string("--level is required ") +
                     (k.uses_tree() ? "by the tree kernel " + k.name : !in.ppb.empty() ? "with --ppb" : "with --mask near"));
  s.level = level.empty() ? 0 : level == "auto" ? kAutoLevel : static_cast<int>(single_int(level, "level", 0, kLevelOptionMax));
  if (s.level == kAutoLevel && !in.ppb.empty())
    throw UsageError("--level auto needs --input or --n: with --ppb the level defines the input");
  if (k.near_field() && s.mask == Mask::near) err << "note: --mask applies to all-pairs kernels only\n";
  if (!needs_level && !level.empty())  // said, not dropped without a word
    err << "note: --level " << level << " is not used: " << k.name << " sums over every pair (no tree)\n";
  apply_threads(threads);
  note_threads(vm, {k.name}, err);
  const std::int64_t n = in.n.empty() ? -1 : single_int(in.n, "n"), ppb = in.ppb.empty() ? -1 : single_int(in.ppb, "ppb");
  if (in.input.empty()) {  // a generated input: its memory is known before it is made
    const GenerateOptions g = generator_options(in, n, s.level, ppb);
    check_run_memory(k, s, g.dim, static_cast<std::uint64_t>(generated_count(g)), generated_bytes(g), false, gpus);
  }
  const Particles p = load_input(in, n, s.level, ppb);
  if (!in.input.empty()) check_run_memory(k, s, p.dim, p.size(), 0.0, false, gpus);
  s.domain = resolve_domain(p, domain, in.input.empty() ? "generated input" : in.input);
  std::string note;
  s.level = resolve_level(s.level, p, *s.domain, k, s, note);  // a full method: at its order, near kernel, precision
  if (!note.empty()) out << note << "\n";
  // A CPU evaluation estimated above kLongRunSeconds says so and reports progress (docs/design.md §5).
  std::unique_ptr<LongRun> long_run;
  if (const auto e = estimate_cpu_run(k, s, p); e && e->seconds() > kLongRunSeconds) {
    long_run = std::make_unique<LongRun>(
        err, k.name + " on " + std::to_string(p.size()) + " particles", *e,
        k.near_field() ? ""
                       : "; for a reference at this N, `nearfield validate --sample M` compares M targets in O(M N)");
    s.progress = long_run->progress();
  }
  auto m = make_spread_method(k, s, p, spread);
  if (const OrderSearch* o = m->order_search()) out << o->describe(k.name) << "\n";
  m->prepare(p);
  m->evaluate();
  long_run.reset();
  const std::vector<double> acc = m->accelerations();
  check_finite_accelerations(acc, p, s.precision);  // an overflow had been written as nan, exit 0
  write_accelerations_csv(output, p, acc);
  out << "wrote " << p.size() << " accelerations (" << k.name << ", " << precision
      << (round_inputs ? ", float32-rounded inputs" : "")
      << (gpus > 1 ? ", " + std::to_string(gpus) + " GPUs, cross pairs " +
                         to_string(resolve_cross_pairs(k, spread.cross))
                   : std::string())
      << ") to " << output << "\n";
  return 0;
}

}  // namespace nf::cli
