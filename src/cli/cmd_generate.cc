// nearfield generate: write a distribution to a particle file.
#include "cli/commands.h"
#include "io/output_file.h"
#include "core/errors.h"
#include "io/particle_file.h"
#include "methods/memory_estimate.h"

namespace nf::cli {

int cmd_generate(const Args& args, std::ostream& out, std::ostream& err) {
  InputArgs in;
  in.dist = "uniform";
  std::string output, level, format;
  po::options_description d("generate options");
  d.add_options()("help", "this help")("output", po::value(&output)->required(),
                                       "file to write; the format follows the extension (.csv, .tipsy, .tab, .bin)")(
      "format", po::value(&format), "output format when the extension does not say: csv, tipsy, tab, bin")(
      "level", po::value(&level), "with --ppb: tree/octree level whose boxes get --ppb particles each");
  add_input_options(d, in, false);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield generate --dist uniform|uniform-fast|uniform-exact|plummer|clusters|mixed|lattice|shell|core|corners|galaxies "
                  "--dim 2|3 (--n N | --level K --ppb P) [--seed S] --output FILE [--format csv|tipsy|tab|bin]"))
    return 0;
  check_output_path(output);
  check_input_args(in);
  if (in.dist == "galaxies" && vm["dim"].defaulted()) in.dim = "3";  // galaxies are 3D only
  const io::FileFormat fmt = io::resolve_file_format(output, format);
  const std::int64_t n = in.n.empty() ? -1 : single_int(in.n, "n", 0);
  const std::int64_t ppb = in.ppb.empty() ? -1 : single_int(in.ppb, "ppb", 1);
  const int k = level.empty() ? -1 : static_cast<int>(single_int(level, "level", 0, kLevelOptionMax));
  GenerateOptions g = generator_options(in, n, k, ppb);
  if (ppb < 0) g.level = k;  // --level without --ppb: the generator refuses it, naming the pair
  // The particles' memory before they are made (docs/design.md §6); the writers stream them out.
  MemoryNeed need;
  need.host.push_back({"particles", generated_bytes(g)});
  check_memory(need, std::to_string(generated_count(g)) + " generated particles (" + std::to_string(g.dim) + "D)");
  const Particles p = generate(g);
  err << io::storage_note(output, p, fmt);
  io::write_particles(output, p, fmt);
  out << "wrote " << p.size() << " particles (" << g.dist << ", " << g.dim << "D, seed " << g.seed << ") to " << output
      << " (" << io::to_string(fmt) << ")\n";
  return 0;
}

}  // namespace nf::cli
