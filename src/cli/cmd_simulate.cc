// nearfield simulate: leapfrog integration with any kernel (the loop is sim/simulation.h).
#include "cli/commands.h"
#include "core/errors.h"
#include "methods/auto_level.h"
#include "io/particle_file.h"
#include "methods/memory_estimate.h"
#include "distributed/spread_method.h"
#include "render/density_image.h"
#include "sim/simulation.h"

namespace nf::cli {

namespace {
// What run.ini records as the input: the file, or the generator's options.
std::string input_label(const InputArgs& in, const std::string& level) {
  if (!in.input.empty()) return in.input;
  if (in.n.empty() && in.ppb.empty()) return "";
  std::string s = "generated: --dist " + in.dist + " --dim " + in.dim;
  s += in.ppb.empty() ? " --n " + in.n : " --level " + level + " --ppb " + in.ppb;
  return s + " --seed " + std::to_string(in.seed) + " --mass " + in.mass;
}
}  // namespace

int cmd_simulate(const Args& args, std::ostream& out, std::ostream& err) {
  InputArgs in;
  sim::SimulationConfig c;
  std::string precision = "float", format = "csv", plane = "xy";
  int threads = 0;
  const std::string gpus_help =
      std::string("G > 1, GPU near-field kernels: each step's forces spread over G GPUs of this host (decomposition and "
                  "halo exchange as forces --gpus); positions pass through the host every step and the leapfrog runs "
                  "there") +
      emulate_gpus_help();
  po::options_description d("simulate options");
  d.add_options()("help", "this help")("kernel", po::value(&c.kernel)->required(),
                                       "any kernel (nearfield bench --list): all-pairs kernels give the exact softened "
                                       "dynamics, near-field kernels only the near-field part of the force")(
      "dt", po::value(&c.dt)->required(), "time step (> 0)")("steps", po::value(&c.steps)->required(),
                                                              "number of steps S (>= 0)")(
      "softening", po::value(&c.softening)->default_value(c.softening), "softening length eps >= 0")(
      "level", po::value(&c.level),
      "tree level K, required by a tree kernel (near field or full method; boxes over each step's bounding square/cube), or auto: chosen once from "
      "the initial particles")("precision", po::value(&precision)->default_value(precision),
                               "float or double arithmetic of the kernel (positions and velocities stay float64)")(
      "snapshot-every", po::value(&c.snapshot_every)->default_value(c.snapshot_every),
      "M: snapshot and energy row every M steps, plus step 0 and the last (0: step 0 and the last only)")(
      "output-dir", po::value(&c.output_dir)->required(), "folder of snap_NNNNNN.EXT, energy.csv, run.ini, frames")(
      "format", po::value(&format)->default_value(format), "snapshot format: csv, tipsy or bin (bin and csv are exact)")(
      "subsample", po::value(&c.subsample)->default_value(c.subsample),
      "k > 1, all-pairs kernels: each step uses every k-th source (offset = step mod k), masses times k")(
      "render-every", po::value(&c.render_every)->default_value(c.render_every),
      "R > 0: frame_NNNNNN.png every R steps and at step 0, with the window and colour range of step 0")(
      "render-size", po::value(&c.render_size)->default_value(c.render_size), "frame width in pixels")(
      "render-plane", po::value(&plane)->default_value(plane), "frame projection plane: xy, xz or yz")(
      "render-window", po::value(&c.render_window),
      "part of the plane the frames show, U0,U1,V0,V1 (default: a square around the particles of step 0)")(
      "resume", po::bool_switch(&c.resume),
      "continue the run in --output-dir from its last snapshot (same settings; --steps may be larger)")(
      "gpus", po::value(&c.gpus)->default_value(c.gpus),
      gpus_help.c_str())(
      "order", po::value(&c.order)->default_value(c.order),
      "full methods (cpu-fmm, fmm): the expansions' order p, 1..20 (0: from --accuracy)")(
      "accuracy", po::value(&c.accuracy)->default_value(c.accuracy),
      "full methods: the target relative L2 error that picks the order (0: 1e-4)")(
      "near", po::value(&c.near), "full methods: the near-field kernel of the direct part (default: the device's)")(
      "leaf-size", count_option(c.leaf_size, "leaf-size"),
      "adaptive full methods (cpu-fmm-adaptive, fmm-adaptive): a box is split while it holds more than this many particles "
      "(0: automatic, from the order and the device; docs/design.md §16)")(
      "order-sample", count_option(c.order_sample, "order-sample"),
      order_sample_help("sampled targets of step 0").c_str())(
      "timing", po::value(&c.timing_csv),
      "results CSV to append the cost of a step to: forces, tree, plan, transfers, integration, diagnostics "
      "(median/min/max over the steps)");
  add_input_options(d, in);
  add_threads_option(d, threads);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield simulate --input F --kernel K --dt DT --steps S [--softening EPS] [--level K|auto] "
                  "[--precision float|double] [--snapshot-every M] --output-dir DIR [--format csv|tipsy|bin] "
                  "[--subsample k] [--gpus G] [--render-every R] [--resume] [--timing RESULTS.csv] [--threads T]\n"
                  "Leapfrog kick-drift-kick (velocity Verlet). Writes DIR/snap_NNNNNN.EXT at steps 0, M, 2M, ... and "
                  "the last, DIR/energy.csv (step,time,kinetic,potential,total,rel_energy_error,px,py,pz,force_model) "
                  "at the same steps, and DIR/run.ini; progress with the time left on stderr. GPU kernels keep the "
                  "particles on the GPU between steps. Instead of --input, a generated input (--dist ... --n N, or "
                  "--level K --ppb P)."))
    return 0;
  check_input_args(in);
  if (c.render_every == 0)  // the frames' options without frames had been accepted and dropped
    for (const char* o : {"render-size", "render-plane", "render-window"})
      if (vm.count(o) && !vm[o].defaulted())
        throw UsageError(std::string("--") + o + " shapes the frames of --render-every R > 0; this run writes none");
  c.precision = parse_precision(precision);
  c.format = io::parse_file_format(format);
  c.render_plane = render::parse_plane(plane);
  c.input = input_label(in, c.level);
  apply_threads(threads);
  sim::check_config(c);  // every refusal before the input is read
  note_threads(vm, {c.kernel}, err);
  Particles p;
  if (!c.resume) {
    const int level = sim::parse_level(c.level);
    if (!in.ppb.empty() && level == kAutoLevel)
      throw UsageError("--level auto needs --input or --n: with --ppb the level defines the input");
    if (!in.ppb.empty() && c.level.empty()) throw UsageError("--ppb needs --level K (N = boxes x P)");
    const std::int64_t n = in.n.empty() ? -1 : single_int(in.n, "n"), ppb = in.ppb.empty() ? -1 : single_int(in.ppb, "ppb");
    // Memory before any work: the input, the run's state (positions and velocities in float64,
    // a copy of the input) and the kernel's method; a generated input before it is made.
    const KernelInfo& k = find_kernel(c.kernel);
    if (in.input.empty()) {
      const GenerateOptions g = generator_options(in, n, level, ppb);
      const auto count = static_cast<std::uint64_t>(generated_count(g));
      check_run_memory(k, sim::method_setup(c, level), g.dim, count,
                       generated_bytes(g) + particle_bytes(g.dim, count, true, false), false, c.gpus);
    }
    p = load_input(in, n, level, ppb);
    if (!in.input.empty())
      check_run_memory(k, sim::method_setup(c, level), p.dim, p.size(), particle_bytes(p.dim, p.size(), true, false),
                       false, c.gpus);
  }
  const sim::SimulationResult r = sim::simulate(c, c.resume ? nullptr : &p, out, err);
  if (!r.already_complete)
    out << "wrote steps " << r.first_step << ".." << r.last_step << " to " << c.output_dir << "\n";
  return 0;
}

}  // namespace nf::cli
