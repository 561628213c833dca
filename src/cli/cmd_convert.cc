// nearfield convert: a particle file in another format (docs/design.md §13).
#include <chrono>
#include <filesystem>

#include "cli/commands.h"
#include "core/numbers.h"
#include "core/errors.h"
#include "io/input_path.h"
#include "io/output_file.h"
#include "io/particle_file.h"

namespace nf::cli {

namespace {
std::string contents(const Particles& p) {
  std::string s = std::to_string(p.size()) + " particles, " + std::to_string(p.dim) + "D";
  if (p.has_velocities()) s += ", velocities";
  if (!p.id.empty()) s += ", ids";
  return s;
}
// "6400000040 bytes in 3.2 s (2.0 GB/s)": how fast a file went through.
std::string rate(const std::string& path, std::chrono::steady_clock::duration elapsed) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  const double s = std::chrono::duration<double>(elapsed).count();
  if (ec) return format_number("in %.3g s", s);
  return std::to_string(bytes) + " bytes in " + format_number("%.3g s", s) + (s > 0 ? format_number(" (%.3g GB/s)", bytes / s * 1e-9) : "");
}

}  // namespace

int cmd_convert(const Args& args, std::ostream& out, std::ostream& err) {
  std::string input, output, input_format, format;
  po::options_description d("convert options");
  d.add_options()("help", "this help")("input", po::value(&input)->required(), "particle file to read")(
      "output", po::value(&output), "particle file to write (without it: only read and check --input)")(
      "input-format", po::value(&input_format), "format of --input (default: by extension): csv, tipsy, tab, bin")(
      "format", po::value(&format), "format of --output (default: by extension): csv, tipsy, tab, bin");
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield convert --input A [--output B] [--input-format F] [--format F]\n"
                  "Without --output the input is only read and checked, and the read rate printed.\n"
                  "formats: csv (.csv), tipsy (.tipsy .std), tab (.tab .dat .txt: mass x y z vx vy vz rows), "
                  "bin (.bin)"))
    return 0;
  // Both formats are resolved before anything is read, so a bad name fails fast; a folder or a
  // missing input says so first.
  check_input_path(input);
  const io::FileFormat from = io::resolve_file_format(input, input_format);
  const io::FileFormat to = output.empty() ? from : io::resolve_file_format(output, format);
  if (!output.empty()) check_output_path(output);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const Particles p = io::read_particles(input, from);
  const auto t1 = Clock::now();
  if (output.empty()) {
    out << "read " << contents(p) << " from " << input << " (" << io::to_string(from) << "): "
        << rate(input, t1 - t0) << "\n";
    return 0;
  }
  err << io::storage_note(output, p, to);
  io::write_particles(output, p, to);
  const auto t2 = Clock::now();
  out << "converted " << contents(p) << ": " << input << " (" << io::to_string(from) << ") -> " << output << " ("
      << io::to_string(to) << ")\n"
      << "read " << rate(input, t1 - t0) << "; wrote " << rate(output, t2 - t1) << "\n";
  return 0;
}

}  // namespace nf::cli
