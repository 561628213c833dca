// nearfield forces: one kernel, accelerations written in input order with ids.
#include "cli/commands.h"
#include "common/csv_io.h"
#include "common/errors.h"
#include "harness/auto_level.h"
#include "harness/evaluation.h"

namespace nf::cli {

int cmd_forces(const Args& args, std::ostream& out, std::ostream& err) {
  InputArgs in;
  std::string level, kernel, domain, output, precision = "float", mask = "all";
  double softening = 1e-4;
  po::options_description d("forces options");
  d.add_options()("help", "this help")("kernel", po::value(&kernel)->required(), "kernel name (see nearfield bench --list)")(
      "level", po::value(&level)->required(), "tree level K (near-field kernels and --mask near), or auto: least near-field pairs + a per-box overhead (README)")(
      "softening", po::value(&softening)->default_value(softening), "softening length eps >= 0")(
      "precision", po::value(&precision)->default_value(precision), "float or double arithmetic")(
      "mask", po::value(&mask)->default_value(mask), "all-pairs kernels: all or near")(
      "domain", po::value(&domain), "x0,y0[,z0],side (default: smallest square/cube from the positions)")(
      "output", po::value(&output)->required(), "CSV to write: id,ax,ay[,az] in input order");
  add_input_options(d, in);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield forces --input FILE.csv --level K --kernel NAME [--softening EPS] "
                  "[--precision float|double] [--domain ...] --output ACC.csv"))
    return 0;
  const KernelInfo& k = find_kernel(kernel);
  ForceSetup s;
  s.level = level == "auto" ? kAutoLevel : static_cast<int>(single_int(level, "level"));
  if (s.level == kAutoLevel && !in.ppb.empty()) throw UsageError("--level auto needs --input or --n: with --ppb the level defines the input");
  s.softening = softening;
  s.precision = parse_precision(precision);
  s.mask = parse_mask(mask);
  if (k.near_field && s.mask == Mask::near) err << "note: --mask applies to all-pairs kernels only\n";
  const Particles p = load_input(in, in.n.empty() ? -1 : single_int(in.n, "n"), s.level,
                                 in.ppb.empty() ? -1 : single_int(in.ppb, "ppb"));
  s.domain = resolve_domain(p, domain, in.input.empty() ? "generated input" : in.input);
  std::string note;
  s.level = resolve_level(s.level, p, s.domain, {k.name}, note);
  if (!note.empty()) out << note << "\n";
  auto e = prepare(k, p, s);
  e->run();
  write_accelerations_csv(output, p, e->accelerations());
  out << "wrote " << p.size() << " accelerations (" << k.name << ", " << precision << ") to " << output << "\n";
  return 0;
}

}  // namespace nf::cli
