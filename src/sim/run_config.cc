// A simulation's settings, their checks, run.ini and where a run starts (sim/run_config.h,
// docs/design.md §12).
#include "sim/run_config.h"

#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "core/errors.h"
#include "core/numbers.h"
#include "core/version.h"
#include "distributed/process_group.h"
#include "distributed/spread_method.h"
#include "farfield/multi_index.h"
#include "io/output_file.h"
#include "methods/auto_level.h"
#include "methods/force_method.h"
#include "methods/registry.h"
#include "sim/step_costs.h"
#include "tree/domain.h"

namespace nf::sim {
namespace {

namespace fs = std::filesystem;

// A setting --resume compares, keyed as run.ini records it, with the option that sets it, and
// what a run.ini without the key means (runs made before the option existed; null: nothing).
struct Setting {
  const char* key;
  const char* option;
  std::string value;
  const char* absent = nullptr;
  bool numeric = false;  // compared as numbers (a hand-edited "0.010" is the run's 0.01), not as text
};

// Whether run.ini's recorded text matches a setting's value.
bool same_setting(const Setting& s, const std::string& recorded) {
  double a = 0, b = 0;
  if (s.numeric && parse_double(recorded, a) && parse_double(s.value, b)) return a == b;
  return recorded == s.value;
}

std::vector<Setting> compared_settings(const SimulationConfig& c) {
  const bool frames = c.render_every > 0;
  return {{"kernel", "--kernel", c.kernel},
          {"dt", "--dt", format_double(c.dt), nullptr, true},
          {"softening", "--softening", format_double(c.softening), nullptr, true},
          {"level_requested", "--level", c.level.empty() ? "-" : c.level},
          {"precision", "--precision", to_string(c.precision)},
          {"subsample", "--subsample", std::to_string(c.subsample)},
          {"gpus", "--gpus", std::to_string(c.gpus), "1"},
          {"order", "--order", std::to_string(c.order), "0"},
          {"accuracy", "--accuracy", format_double(c.accuracy), "0", true},
          {"near", "--near", c.near.empty() ? "-" : c.near, "-"},
          {"leaf_size", "--leaf-size", std::to_string(c.leaf_size), "0"},
          {"order_sample", "--order-sample", std::to_string(c.order_sample), "0"},
          {"snapshot_every", "--snapshot-every", std::to_string(c.snapshot_every)},
          {"format", "--format", io::to_string(c.format)},
          {"render_every", "--render-every", std::to_string(c.render_every)},
          {"render_size", "--render-size", frames ? std::to_string(c.render_size) : "-"},
          {"render_plane", "--render-plane", frames ? render::to_string(c.render_plane) : "-"},
          {"render_window_requested", "--render-window", frames && !c.render_window.empty() ? c.render_window : "-"}};
}

bool holds_a_run(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(in_dir(dir, "run.ini"), ec)) return true;
  for (io::FileFormat f : {io::FileFormat::csv, io::FileFormat::tipsy, io::FileFormat::table, io::FileFormat::bin})
    if (!snapshot_steps(dir, f).empty()) return true;
  return false;
}

// "a,b,..." of `count` finite numbers (run.ini's render window and density range).
std::vector<double> parse_numbers(const std::string& text, std::size_t count, const std::string& where) {
  std::vector<double> v;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    double x = 0;
    if (!parse_double(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start), x) ||
        !std::isfinite(x))
      throw InputError(where + ": '" + text + "' is not a list of finite numbers");
    v.push_back(x);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.size() != count) throw InputError(where + ": '" + text + "' needs " + std::to_string(count) + " numbers");
  return v;
}

std::string join_numbers(std::initializer_list<double> values) {
  std::string s;
  for (double v : values) {
    if (!s.empty()) s += ',';
    append_double(s, v);
  }
  return s;
}

// --resume's checks: the recorded settings (every difference named) and the snapshots.
void check_resume(const SimulationConfig& c) {
  std::error_code ec;
  const std::string ini = in_dir(c.output_dir, "run.ini");
  if (!fs::exists(ini, ec)) throw UsageError("--resume: " + c.output_dir + " holds no run (no run.ini)");
  const RunDescription d = RunDescription::read(ini);
  std::string differences;
  for (const Setting& s : compared_settings(c))
    if (!same_setting(s, d.has(s.key) ? d.get(s.key) : std::string(s.absent ? s.absent : "")))
      differences += std::string(differences.empty() ? "" : "; ") + s.option + " " + s.value + " (the run has " +
                     (d.has(s.key) ? d.get(s.key) : std::string("none")) + ")";
  if (!c.input.empty() && d.get("input") != c.input)
    differences += std::string(differences.empty() ? "" : "; ") + "--input " + c.input + " (the run has " +
                   d.get("input") + ")";
  if (!differences.empty())
    throw UsageError("--resume: the run in " + c.output_dir + " was made with other settings: " + differences);
  const std::vector<std::uint64_t> snaps = snapshot_steps(c.output_dir, c.format);
  if (snaps.empty())
    throw UsageError("--resume: " + c.output_dir + " holds no " + io::to_string(c.format) +
                     " snapshot (the run stopped before writing step 0: remove the folder and start again)");
  if (snaps.back() > std::uint64_t(c.steps))
    throw UsageError("--resume: " + c.output_dir + " holds snapshots up to step " + std::to_string(snaps.back()) +
                     ", past --steps " + std::to_string(c.steps));
}

// The pictures' width and plane (the view and density range come from step 0 or run.ini).
render::RenderOptions frame_of(const SimulationConfig& c) {
  render::RenderOptions o;
  o.width = c.render_size;
  o.plane = c.render_plane;
  return o;
}

}  // namespace

std::string in_dir(const std::string& dir, const std::string& name) { return (fs::path(dir) / name).string(); }

int parse_level(const std::string& level) {
  if (level.empty()) return 0;
  if (level == "auto") return kAutoLevel;
  std::int64_t k = 0;
  if (!parse_int64(level, k) || k < 0 || k > 64)
    throw UsageError("--level takes a level K >= 0 or auto, not '" + level + "'");
  return static_cast<int>(k);
}

MethodSetup method_setup(const SimulationConfig& c, int level) {
  MethodSetup s;  // no domain: the boxes of every step's own bounding square/cube
  s.level = level;
  s.softening = c.softening;
  s.precision = c.precision;
  s.subsample = c.subsample;
  s.order = c.order;
  s.accuracy = c.accuracy;
  s.near = c.near;
  s.leaf_size = c.leaf_size;
  s.order_sample = c.order_sample;
  return s;
}

std::string input_name(const SimulationConfig& c) { return c.input.empty() ? "particles given in memory" : c.input; }

void check_config(const SimulationConfig& c) {
  const KernelInfo& k = find_kernel(c.kernel);
  if (!(c.dt > 0.0) || !std::isfinite(c.dt)) throw UsageError("--dt must be a finite number > 0, not " + format_double(c.dt));
  if (c.steps < 0) throw UsageError("--steps must be at least 0, not " + std::to_string(c.steps));
  if (c.snapshot_every < 0)
    throw UsageError("--snapshot-every must be at least 0 (0: step 0 and the last only), not " +
                     std::to_string(c.snapshot_every));
  if (c.render_every < 0) throw UsageError("--render-every must be at least 0, not " + std::to_string(c.render_every));
  if (c.render_size < 1 || c.render_size > 16384)
    throw UsageError("--render-size must be 1..16384 pixels, not " + std::to_string(c.render_size));
  if (!c.render_window.empty()) render::parse_view(c.render_window, "--render-window");
  if (c.format == io::FileFormat::table)
    throw UsageError("--format tab stores neither ids nor the time, which snapshots and --resume need: snapshots "
                     "are csv, tipsy or bin");
  parse_level(c.level);  // a malformed --level: refused here
  if (k.uses_tree() && c.level.empty()) throw UsageError("--level is required by the tree kernel " + k.name);
  if (!k.uses_tree() && !c.level.empty())  // it had been recorded in run.ini and ignored
    throw UsageError("--level " + c.level + " sets the tree level of a tree kernel; " + k.name + " uses none");
  if (c.output_dir.empty()) throw UsageError("--output-dir is required");
  check_gpus(k, c.gpus);  // before the kernel's checks: a CPU build's refusal then names --gpus
  check_setup(k, method_setup(c, 0));
  if (!c.timing_csv.empty()) {
    check_output_path(c.timing_csv);
    check_timing_file(c.timing_csv);  // another command's results file: refused now, not after the run
  }
  if (c.output_dir == "-") throw UsageError("--output-dir takes a folder; '-' (standard output) is for single files");
  check_output_folder(c.output_dir);  // a folder, or one that can be made, where files can be created
  if (c.resume) {
    check_resume(c);
    return;
  }
  if (holds_a_run(c.output_dir))
    throw UsageError(c.output_dir + " already holds a run (run.ini or snapshots): continue it with --resume, or "
                     "choose another --output-dir");
}

RunStart fresh_start(const SimulationConfig& c, const KernelInfo& k, const Particles* initial, std::ostream& log) {
  if (!initial) throw std::logic_error("simulate: a fresh run needs particles");
  RunStart r;
  r.frame = frame_of(c);
  r.particles = *initial;
  r.level = parse_level(c.level);
  if (r.level == kAutoLevel) {
    std::string note;
    r.level = resolve_level(kAutoLevel, r.particles, default_domain(r.particles), k, method_setup(c, kAutoLevel), note);
    log << note << "\n";
  }
  return r;
}

RunStart resume_start(const SimulationConfig& c, const KernelInfo& k, std::ostream& log) {
  const std::string ini = in_dir(c.output_dir, "run.ini");
  RunStart r;
  r.frame = frame_of(c);
  r.ini = RunDescription::read(ini);
  r.step = snapshot_steps(c.output_dir, c.format).back();
  const RunDescription& d = r.ini;
  const std::string snap = in_dir(c.output_dir, snapshot_name(r.step, c.format));
  // Read and checked even where it completes the run: an empty or damaged last snapshot (a folder
  // of its name) had been taken for a finished run, exit 0.
  r.particles = io::read_particles(snap, c.format);
  if (std::to_string(r.particles.dim) != d.get("dim") || std::to_string(r.particles.size()) != d.get("n"))
    throw InputError(snap, 0, "holds " + std::to_string(r.particles.size()) + " particles in " +
                                  std::to_string(r.particles.dim) + "D; the run has " + d.get("n") + " in " +
                                  d.get("dim") + "D");
  if (r.step == std::uint64_t(c.steps)) {
    r.complete = true;
    r.particles = Particles();
    return r;
  }
  r.level = k.uses_tree() ? parse_level(d.get("level")) : parse_level(c.level);  // the level auto chose
  if (k.adaptive() && c.leaf_size == 0) {
    std::int64_t size = 64;  // runs recorded before leaf_size_used took the former default
    if (d.has("leaf_size_used") && (!parse_int64(d.get("leaf_size_used"), size) || size < 1 || size > 0xFFFFFFFFll))
      throw InputError(ini, 0, "leaf_size_used = '" + d.get("leaf_size_used") + "' is not a leaf size");
    r.leaf_size = static_cast<std::uint32_t>(size);
    log << "resuming at leaf size " << size
        << (d.has("leaf_size_used") ? " (the run's)" : " (the run predates leaf_size_used: the default then)") << "\n";
  }
  // An order from the accuracy follows the leaf level and the error model: a resumed run keeps the
  // order it ran at (run.ini's order_used), so that a change of the model does not change it halfway.
  if (k.far_field() && c.order == 0 && d.has("order_used")) {
    std::int64_t order = 0;
    if (!parse_int64(d.get("order_used"), order) || order < 1 || order > farfield::kMaxOrder)
      throw InputError(ini, 0, "order_used = '" + d.get("order_used") + "' is not an expansion order");
    r.order = static_cast<int>(order);
    log << "resuming at order " << order << " (the run's)\n";
  }
  if (c.render_every > 0) {
    const std::vector<double> w = parse_numbers(d.get("render_window"), 4, ini + ": render_window");
    const std::vector<double> range = parse_numbers(d.get("render_density_range"), 2, ini + ": render_density_range");
    r.frame.view = render::View{w[0], w[1], w[2], w[3]};
    if (range[1] > 0) r.frame.density_range = std::make_pair(range[0], range[1]);  // 0,0: step 0 drew nothing
  }
  log << "resuming " << c.output_dir << " from the snapshot of step " << r.step << " (" << snap << ")\n";
  if (c.format == io::FileFormat::tipsy)
    log << "note: tipsy snapshots hold float32 positions and velocities: the resumed run continues from rounded "
           "values, not bit for bit\n";
  return r;
}

void record_run(const SimulationConfig& c, const KernelInfo& k, const ForceMethod& field, int dim, std::size_t n,
                int level, const render::RenderOptions& frame, RunDescription& d) {
  if (!c.resume) {
    create_output_folder(c.output_dir);
    d.set("kernel", c.kernel);
    d.set("traits", k.trait_list());
    d.set("forces", to_string(field.model()));
    d.set("forces_described", field.describe());
    d.set("dim", std::to_string(dim));
    d.set("n", std::to_string(n));
    d.set("input", input_name(c));
    for (const Setting& s : compared_settings(c)) d.set(s.key, s.value);
    d.set("level", k.uses_tree() ? std::to_string(level) : std::string("-"));
    if (field.model() == ForceModel::fmm) d.set("order_used", std::to_string(field.setup().order));
    if (k.adaptive()) d.set("leaf_size_used", std::to_string(field.setup().leaf_size));
    if (c.render_every > 0) {
      const render::View& v = *frame.view;
      d.set("render_window", join_numbers({v.u0, v.u1, v.v0, v.v1}));
      // 0,0 where step 0's frame drew nothing: every frame then takes its own range
      d.set("render_density_range", frame.density_range ? join_numbers({frame.density_range->first, frame.density_range->second})
                                                        : std::string("0,0"));
    }
  }
  d.set("steps", std::to_string(c.steps));
  d.set("processes", std::to_string(process_count()));  // this (last) part's MPI ranks; a resume may change them
  d.set("nearfield", std::string(project_version()) + ", git commit " + git_commit());
  d.write(in_dir(c.output_dir, "run.ini"));
}

}  // namespace nf::sim
