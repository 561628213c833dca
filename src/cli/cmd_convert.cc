// nearfield convert: a particle file in another format (DESIGN.md section 13).
#include "cli/commands.h"
#include "common/errors.h"
#include "io/particle_file.h"

namespace nf::cli {

namespace {
std::string contents(const Particles& p) {
  std::string s = std::to_string(p.size()) + " particles, " + std::to_string(p.dim) + "D";
  if (p.has_velocities()) s += ", velocities";
  if (!p.id.empty()) s += ", ids";
  return s;
}
}  // namespace

int cmd_convert(const Args& args, std::ostream& out, std::ostream& err) {
  std::string input, output, input_format, format;
  po::options_description d("convert options");
  d.add_options()("help", "this help")("input", po::value(&input)->required(), "particle file to read")(
      "output", po::value(&output)->required(), "particle file to write")(
      "input-format", po::value(&input_format), "format of --input (default: by extension): csv, tipsy, tab, bin")(
      "format", po::value(&format), "format of --output (default: by extension): csv, tipsy, tab, bin");
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield convert --input A --output B [--input-format F] [--format F]\n"
                  "formats: csv (.csv), tipsy (.tipsy .std), tab (.tab .dat .txt: mass x y z vx vy vz rows), bin (.bin)"))
    return 0;
  // Both formats are resolved before anything is read, so a bad name fails fast.
  const io::FileFormat from = io::resolve_file_format(input, input_format);
  const io::FileFormat to = io::resolve_file_format(output, format);
  const Particles p = io::read_particles(input, from);
  err << io::storage_note(output, p, to);
  io::write_particles(output, p, to);
  out << "converted " << contents(p) << ": " << input << " (" << io::to_string(from) << ") -> " << output << " ("
      << io::to_string(to) << ")\n";
  return 0;
}

}  // namespace nf::cli
