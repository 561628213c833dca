// nearfield render: a log-scaled surface density picture of a particle file (docs/design.md §14).
#include "cli/commands.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "io/input_path.h"
#include "io/output_file.h"
#include "io/particle_file.h"
#include "render/density_image.h"
#include "render/png_file.h"

namespace nf::cli {

int cmd_render(const Args& args, std::ostream& out, std::ostream&) {
  std::string input, input_format, output, plane = "xy", window;
  int size = 800;
  po::options_description d("render options");
  d.add_options()("help", "this help")("input", po::value(&input)->required(), "particle file (csv, tipsy, tab, bin)")(
      "input-format", po::value(&input_format), "format of --input when its extension does not say")(
      "output", po::value(&output)->required(), "PNG file to write")(
      "size", po::value(&size)->default_value(size), "picture width in pixels (1..16384); height follows the window")(
      "plane", po::value(&plane)->default_value(plane), "projection plane: xy, xz or yz (2D input: xy only)")(
      "window", po::value(&window),
      "part of the plane shown, U0,U1,V0,V1 (default: a square around all particles with a 5% margin)");
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield render --input F --output X.png [--size PX] [--plane xy|xz|yz] "
                  "[--window U0,U1,V0,V1]\n"
                  "Each particle's mass goes to the pixel that holds it; colours follow log(mass per area) from "
                  "the least to the most dense pixel (dark violet -> red -> pale yellow), empty pixels are black."))
    return 0;
  render::RenderOptions opt;
  opt.width = size;
  opt.plane = render::parse_plane(plane);
  if (!window.empty()) opt.view = render::parse_view(window, "--window");
  if (size < 1 || size > 16384) throw UsageError("--size must be 1..16384 pixels, not " + std::to_string(size));
  check_input_path(input);
  if (output != "-" && io::extension_of(output) != "png")  // PNG data under another name had been written
    throw UsageError("--output " + output + ": render writes PNG images; name the file X.png (or - for standard output)");
  check_output_path(output, input);
  const Particles p = io::read_particles(input, input_format);
  const render::Rendering r = render::render_density(p, opt);
  render::write_png(output, r.image);
  out << "wrote " << output << ": " << r.image.width << " x " << r.image.height << " pixels, plane " << plane
      << ", window " << format_double(r.view.u0) << "," << format_double(r.view.u1) << "," << format_double(r.view.v0)
      << "," << format_double(r.view.v1) << "; " << r.drawn << " particles drawn, " << r.outside
      << " outside the window; " << (r.counts ? "particles" : "mass") << " per unit area from "
      << format_double(r.density_lo) << " to " << format_double(r.density_hi) << " (log scale)\n";
  return 0;
}

}  // namespace nf::cli
