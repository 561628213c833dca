#include "sim/simulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "io/atomic_file.h"
#include "tree/domain.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "core/version.h"
#include "methods/auto_level.h"
#include "measure/context.h"
#include "methods/force_method.h"
#include "methods/registry.h"
#include "measure/results.h"
#include "measure/stats.h"
#include "distributed/spread_method.h"
#include "render/png_file.h"
#include "sim/state.h"

namespace nf::sim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Up to this many particles energy.csv's potential is evaluated in float64 on the CPU also for GPU
// kernels (the size up to which float64 all-pairs on the CPU is the validation's ground truth).
constexpr std::size_t kHostPotentialMax = 20000;

std::string in_dir(const std::string& dir, const std::string& name) { return (fs::path(dir) / name).string(); }

// A setting --resume compares, keyed as run.ini records it, with the option that sets it, and
// what a run.ini without the key means (runs made before the option existed; null: nothing).
struct Setting {
  const char* key;
  const char* option;
  std::string value;
  const char* absent = nullptr;
};

std::vector<Setting> compared_settings(const SimulationConfig& c) {
  const bool frames = c.render_every > 0;
  return {{"kernel", "--kernel", c.kernel},
          {"dt", "--dt", format_double(c.dt)},
          {"softening", "--softening", format_double(c.softening)},
          {"level_requested", "--level", c.level.empty() ? "-" : c.level},
          {"precision", "--precision", to_string(c.precision)},
          {"subsample", "--subsample", std::to_string(c.subsample)},
          {"gpus", "--gpus", std::to_string(c.gpus), "1"},
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

// "1 h 2 min", "2 min 5 s", "12.3 s".
std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "unknown";
  const long s = std::lround(seconds);
  if (s >= 3600) return std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) + " min";
  if (s >= 60) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f s", seconds);
  return b;
}

// Progress lines with the time left, at most one every `interval` seconds (and the last step).
class Progress {
 public:
  Progress(std::ostream& out, std::uint64_t first, std::uint64_t last)
      : out_(out), first_(first), last_(last), start_(Clock::now()), shown_(start_) {}
  void step(std::uint64_t s) {
    const auto now = Clock::now();
    if (s != last_ && std::chrono::duration<double>(now - shown_).count() < kInterval) return;
    shown_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double per_step = elapsed / double(s - first_);
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * double(s) / double(std::max<std::uint64_t>(last_, 1)));
    out_ << "step " << s << "/" << last_ << " (" << pct << "), " << duration_text(elapsed) << " elapsed"
         << (s == last_ ? ", done" : ", about " + duration_text(per_step * double(last_ - s)) + " left") << "\n";
    out_.flush();
  }

 private:
  static constexpr double kInterval = 2.0;
  std::ostream& out_;
  std::uint64_t first_, last_;
  Clock::time_point start_, shown_;
};

// What one step cost, milliseconds.
struct StepCost {
  double forces = 0, tree = 0, plan = 0, transfer = 0, integrate = 0, wall = 0;
};

// The fixed picture frame of a run: window and density range from step 0, so frames line up.
struct FrameSetup {
  render::RenderOptions options;
};

double kinetic_energy(const Particles& p) {
  double k = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    double v2 = p.vx[i] * p.vx[i] + p.vy[i] * p.vy[i];
    if (p.dim == 3) v2 += p.vz[i] * p.vz[i];
    k += 0.5 * p.m[i] * v2;
  }
  return k;
}

// ||a - ref|| / ||ref|| over all components.
double relative_l2(const std::vector<double>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// The step-cost breakdown as one results row (--timing).
void write_timing_row(const SimulationConfig& c, const KernelInfo& k, int dim, std::size_t n, int level,
                      const std::vector<StepCost>& costs, const std::vector<double>& diagnostics_ms,
                      const std::vector<double>& output_ms, std::ostream& log) {
  const std::vector<std::string> parts = {"step", "forces", "tree", "plan", "transfer", "integrate", "other"};
  std::vector<std::string> columns = {"kernel", "dim", "level", "ppb", "n", "input", "precision", "softening",
                                      "dt", "subsample", "gpus", "steps"};
  for (const std::string& part : parts)
    for (const char* stat : {"median_ms", "min_ms", "max_ms"}) columns.push_back(part + "_" + stat);
  for (const char* col : {"diagnostics_count", "diagnostics_median_ms", "diagnostics_min_ms", "diagnostics_max_ms",
                          "output_median_ms", "beyond_forces_fraction", "beyond_forces_with_diagnostics_fraction"})
    columns.push_back(col);
  for (const std::string& col : context_columns()) columns.push_back(col);
  ResultsFile file(c.timing_csv, columns);

  std::map<std::string, std::string> row = run_context(k, "");
  const double boxes = std::pow(2.0, double(dim * level));
  row["kernel"] = k.name;
  row["dim"] = std::to_string(dim);
  row["level"] = c.level.empty() ? "" : std::to_string(level);
  row["ppb"] = c.level.empty() ? "" : format_double(double(n) / boxes);
  row["n"] = std::to_string(n);
  row["input"] = csv_field(c.input);
  row["precision"] = to_string(c.precision);
  row["softening"] = format_double(c.softening);
  row["dt"] = format_double(c.dt);
  row["subsample"] = std::to_string(c.subsample);
  row["gpus"] = std::to_string(c.gpus);
  row["steps"] = std::to_string(costs.size());
  auto put = [&](const std::string& part, const std::vector<double>& ms) {
    const TimingStats t = summarize(ms);
    row[part + "_median_ms"] = format_double(t.median);
    row[part + "_min_ms"] = format_double(t.min);
    row[part + "_max_ms"] = format_double(t.max);
  };
  std::vector<double> step, forces, tree, plan, transfer, integrate, other, beyond;
  double sum_step = 0, sum_forces = 0;
  for (const StepCost& s : costs) {
    step.push_back(s.wall);
    forces.push_back(s.forces);
    tree.push_back(s.tree);
    plan.push_back(s.plan);
    transfer.push_back(s.transfer);
    integrate.push_back(s.integrate);
    other.push_back(s.wall - s.forces - s.tree - s.plan - s.transfer - s.integrate);
    beyond.push_back((s.wall - s.forces) / s.wall);
    sum_step += s.wall;
    sum_forces += s.forces;
  }
  put("step", step);
  put("forces", forces);
  put("tree", tree);
  put("plan", plan);
  put("transfer", transfer);
  put("integrate", integrate);
  put("other", other);
  row["diagnostics_count"] = std::to_string(diagnostics_ms.size());
  if (!diagnostics_ms.empty()) {
    const TimingStats d = summarize(diagnostics_ms);
    row["diagnostics_median_ms"] = format_double(d.median);
    row["diagnostics_min_ms"] = format_double(d.min);
    row["diagnostics_max_ms"] = format_double(d.max);
  }
  if (!output_ms.empty()) row["output_median_ms"] = format_double(summarize(output_ms).median);
  const TimingStats b = summarize(beyond);
  double diag_total = 0;
  for (double d : diagnostics_ms) diag_total += d;
  row["beyond_forces_fraction"] = format_double(b.median);
  row["beyond_forces_with_diagnostics_fraction"] =
      format_double((sum_step - sum_forces + diag_total) / (sum_step + diag_total));
  file.append(row);
  log << "timing: a row for " << costs.size() << " steps appended to " << c.timing_csv << "\n";
}

void log_costs(const std::vector<StepCost>& costs, const std::vector<double>& diagnostics_ms, std::ostream& log) {
  if (costs.empty()) return;
  std::vector<double> wall, forces, tree, integrate, transfer, beyond;
  for (const StepCost& s : costs) {
    wall.push_back(s.wall);
    forces.push_back(s.forces);
    tree.push_back(s.tree + s.plan);
    transfer.push_back(s.transfer);
    integrate.push_back(s.integrate);
    beyond.push_back((s.wall - s.forces) / s.wall);
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "cost of a step (median of %zu, ms): %.4g in all, forces %.4g, tree + plan %.4g, bodies in/out %.4g, "
                "integration %.4g; beyond the forces %.1f%% of the step",
                costs.size(), summarize(wall).median, summarize(forces).median, summarize(tree).median,
                summarize(transfer).median, summarize(integrate).median, 100.0 * summarize(beyond).median);
  log << line;
  if (!diagnostics_ms.empty()) log << "; diagnostics " << format_double(summarize(diagnostics_ms).median) << " ms each";
  log << "\n";
}

}  // namespace

int parse_level(const std::string& level) {
  if (level.empty()) return 0;
  if (level == "auto") return kAutoLevel;
  std::int64_t k = 0;
  if (!parse_int64(level, k) || k < 0 || k > 64)
    throw UsageError("--level takes a level K >= 0 or auto, not '" + level + "'");
  return static_cast<int>(k);
}

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
    throw UsageError("--format tab stores neither ids nor 2D particles: snapshots are csv, tipsy or bin");
  const int level = parse_level(c.level);
  if (k.near_field() && c.level.empty()) throw UsageError("--level is required by the near-field kernel " + k.name);
  if (!k.near_field() && level == kAutoLevel)
    throw UsageError("--level auto chooses the tree level of a near-field kernel; " + k.name + " uses none");
  if (c.output_dir.empty()) throw UsageError("--output-dir is required");
  check_gpus(k, c.gpus);  // before the kernel's checks: a CPU build's refusal then names --gpus
  MethodSetup s;
  s.softening = c.softening;
  s.subsample = c.subsample;
  check_setup(k, s);
  if (!c.timing_csv.empty()) check_output_path(c.timing_csv);
  std::error_code ec;
  if (fs::exists(c.output_dir, ec) && !fs::is_directory(c.output_dir, ec))
    throw UsageError("--output-dir " + c.output_dir + " exists and is not a folder");
  if (!c.resume) {
    if (holds_a_run(c.output_dir))
      throw UsageError(c.output_dir + " already holds a run (run.ini or snapshots): continue it with --resume, or "
                       "choose another --output-dir");
    return;
  }
  const std::string ini = in_dir(c.output_dir, "run.ini");
  if (!fs::exists(ini, ec)) throw UsageError("--resume: " + c.output_dir + " holds no run (no run.ini)");
  const RunDescription d = RunDescription::read(ini);
  std::string differences;
  for (const Setting& s : compared_settings(c))
    if ((d.has(s.key) ? d.get(s.key) : std::string(s.absent ? s.absent : "")) != s.value)
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

SimulationResult simulate(const SimulationConfig& c, const Particles* initial, std::ostream& log, std::ostream& progress) {
  check_config(c);
  const KernelInfo& k = find_kernel(c.kernel);
  const std::string ini = in_dir(c.output_dir, "run.ini");
  const std::uint64_t last = static_cast<std::uint64_t>(c.steps);
  SimulationResult result;

  // The particles to start from, the level and the picture frame.
  RunDescription d;
  Particles start;
  FrameSetup frame;
  frame.options.width = c.render_size;
  frame.options.plane = c.render_plane;
  std::uint64_t first = 0;
  int level = 0;
  render::Rendering frame0;
  if (c.resume) {
    d = RunDescription::read(ini);
    first = snapshot_steps(c.output_dir, c.format).back();
    result.first_step = result.last_step = first;
    if (first == last) {
      result.already_complete = true;
      log << "the run in " << c.output_dir << " is complete (snapshot of step " << last << "): nothing to do\n";
      return result;
    }
    const std::string snap = in_dir(c.output_dir, snapshot_name(first, c.format));
    start = io::read_particles(snap, c.format);
    if (std::to_string(start.dim) != d.get("dim") || std::to_string(start.size()) != d.get("n"))
      throw InputError(snap, 0, "holds " + std::to_string(start.size()) + " particles in " + std::to_string(start.dim) +
                                    "D; the run has " + d.get("n") + " in " + d.get("dim") + "D");
    level = k.near_field() ? parse_level(d.get("level")) : parse_level(c.level);  // the level auto chose
    if (c.render_every > 0) {
      const std::vector<double> w = parse_numbers(d.get("render_window"), 4, ini + ": render_window");
      const std::vector<double> r = parse_numbers(d.get("render_density_range"), 2, ini + ": render_density_range");
      frame.options.view = render::View{w[0], w[1], w[2], w[3]};
      frame.options.density_range = std::make_pair(r[0], r[1]);
    }
    log << "resuming " << c.output_dir << " from the snapshot of step " << first << " (" << snap << ")\n";
    if (c.format == io::FileFormat::tipsy)
      log << "note: tipsy snapshots hold float32 positions and velocities: the resumed run continues from rounded "
             "values, not bit for bit\n";
  } else {
    if (!initial) throw std::logic_error("simulate: a fresh run needs particles");
    start = *initial;
    level = parse_level(c.level);
    if (level == kAutoLevel) {
      std::string note;
      level = resolve_level(kAutoLevel, start, default_domain(start), {k.name}, note);
      log << note << "\n";
    }
  }
  result.first_step = result.last_step = first;

  MethodSetup setup;  // no domain: the boxes of every step's own bounding square/cube
  setup.level = level;
  setup.softening = c.softening;
  setup.precision = c.precision;
  setup.subsample = c.subsample;
  std::unique_ptr<ForceMethod> field = make_spread_method(k, setup, start, Spread{c.gpus, CrossPairs::automatic});
  std::unique_ptr<ForceMethod> exact;  // sub-sampled runs: the exact forces, for the force error
  if (c.subsample > 1) {
    MethodSetup all = setup;
    all.subsample = 1;
    exact = make_method(k, all, start);
  }
  if (!c.resume && c.render_every > 0) {
    if (!c.render_window.empty()) frame.options.view = render::parse_view(c.render_window, "--render-window");
    frame0 = render::render_density(start, frame.options);  // refuses a plane the particles lack, before any file
    frame.options.view = frame0.view;
    frame.options.density_range = std::make_pair(frame0.density_lo, frame0.density_hi);
  }
  const int dim = start.dim;
  const std::size_t n = start.size();
  // The potential in float64 on the CPU up to kHostPotentialMax particles (as the validation's
  // small-N ground truth), else on the GPU for device fields.
  const bool gpu_potential = field->on_device() && n > kHostPotentialMax;

  log << "simulate: " << n << " particles (" << dim << "D) from " << (c.input.empty() ? d.get("input") : c.input)
      << ", kernel " << k.name << " (" << k.trait_list() << "), " << to_string(c.precision) << ", dt "
      << format_double(c.dt) << ", steps " << first << ".." << last << ", softening " << format_double(c.softening)
      << (k.near_field() ? ", level " + std::to_string(level) : std::string()) << "\n";
  log << "forces: " << field->describe() << "\n";
  if (c.gpus > 1)
    log << "forces on " << c.gpus << " GPUs: positions pass through the host every step (decomposition, halo "
        << "exchange and tree built anew each step; the leapfrog runs on the host)"
        << (emulating_gpus() ? "; NEARFIELD_EMULATE_GPUS=1: every part runs on GPU 0, timings are meaningless" : "")
        << "\n";
  log << "output: " << c.output_dir << ": snap_NNNNNN." << io::to_string(c.format) << " every "
      << (c.snapshot_every > 0 ? std::to_string(c.snapshot_every) + " steps and at the last" : "run: step 0 and the last")
      << ", energy.csv at the same steps"
      << (c.render_every > 0 ? ", frame_NNNNNN.png every " + std::to_string(c.render_every) + " steps" : "") << "\n";

  // run.ini: everything --resume compares, and what a reader wants to know.
  if (!c.resume) {
    fs::create_directories(c.output_dir);
    d.set("kernel", c.kernel);
    d.set("traits", k.trait_list());
    d.set("forces", to_string(field->model()));
    d.set("forces_described", field->describe());
    d.set("dim", std::to_string(dim));
    d.set("n", std::to_string(n));
    d.set("input", c.input);
    for (const Setting& s : compared_settings(c)) d.set(s.key, s.value);
    d.set("level", k.near_field() ? std::to_string(level) : std::string("-"));
    if (c.render_every > 0) {
      const render::View& v = *frame.options.view;
      d.set("render_window", join_numbers({v.u0, v.u1, v.v0, v.v1}));
      d.set("render_density_range", join_numbers({frame.options.density_range->first, frame.options.density_range->second}));
    }
  }
  d.set("steps", std::to_string(last));
  d.set("nearfield", std::string(project_version()) + ", git commit " + git_commit());
  d.write(ini);

  EnergyLog energy(in_dir(c.output_dir, "energy.csv"),
                   {"nearfield simulate, kernel " + k.name + ", " + to_string(c.precision) + ", dt " +
                        format_double(c.dt) + ", softening " + format_double(c.softening),
                    "forces: " + field->describe(),
                    "potential: -sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) over the pairs the forces use" +
                        std::string(field->model() == ForceModel::near_field ? " (the near field)" : " (every pair)") +
                        "; " + (gpu_potential ? field->device_potential_method() : std::string("CPU, float64")),
                    "rel_energy_error = (E - E0) / |E0|, E0 = total at step 0; px,py,pz = sum m v" +
                        std::string(c.subsample > 1 ? "; force_rel_error = ||a - a_exact|| / ||a_exact|| over all "
                                                      "particles at that step (a_exact: every source)"
                                                    : "")},
                   to_string(field->model()), c.subsample > 1);
  energy.load(first);

  std::unique_ptr<State> state = make_state(std::move(start), *field);
  std::vector<StepCost> costs;
  std::vector<double> diagnostics_ms, output_ms;
  bool storage_noted = c.resume;

  auto snapshot_step = [&](std::uint64_t s) {
    return s == last || s == first || (c.snapshot_every > 0 && s % std::uint64_t(c.snapshot_every) == 0);
  };
  // The snapshot grid: steps a run resumed from its snapshots restarts at (--steps can grow).
  auto on_grid = [&](std::uint64_t s) { return c.snapshot_every > 0 && s % std::uint64_t(c.snapshot_every) == 0; };
  auto frame_step = [&](std::uint64_t s) { return c.render_every > 0 && s % std::uint64_t(c.render_every) == 0; };

  // Diagnostics, snapshot and picture of step s (whichever are due).
  auto outputs = [&](std::uint64_t s) {
    const bool snap = snapshot_step(s), pic = frame_step(s);
    if (!snap && !pic) return;
    const auto t0 = Clock::now();
    Particles& p = state->particles();  // one copy from the GPU serves all three
    p.time = double(s) * c.dt;
    if (snap) {
      EnergyRow r;
      r.step = s;
      r.time = p.time;
      r.kinetic = kinetic_energy(p);
      r.potential = gpu_potential ? state->potential() : field->potential(p);
      for (std::size_t i = 0; i < p.size(); ++i) {
        r.px += p.m[i] * p.vx[i];
        r.py += p.m[i] * p.vy[i];
        if (dim == 3) r.pz += p.m[i] * p.vz[i];
      }
      if (exact) r.force_rel_error = relative_l2(state->accelerations(), state->accelerations_of(*exact, s));
      diagnostics_ms.push_back(ms_since(t0));
      const auto t1 = Clock::now();
      const std::string path = in_dir(c.output_dir, snapshot_name(s, c.format));
      if (!storage_noted) {
        log << io::storage_note(path, p, c.format);
        storage_noted = true;
      }
      if (!(c.resume && s == first)) io::write_particles(path, p, c.format);  // the resumed snapshot is there
      energy.add(r);
      result.last_rel_energy_error = energy.rows().back().rel_energy_error;
      output_ms.push_back(ms_since(t1));
    }
    if (pic && !(c.resume && s == first)) {
      const auto t1 = Clock::now();
      const render::Rendering r = s == 0 && !c.resume ? std::move(frame0) : render::render_density(p, frame.options);
      render::write_png(in_dir(c.output_dir, frame_name(s)), r.image);
      if (snap) output_ms.back() += ms_since(t1);
      else output_ms.push_back(ms_since(t1));
    }
  };

  state->compute_accelerations(first);
  outputs(first);
  Progress meter(progress, first, last);
  const double half = 0.5 * c.dt;
  for (std::uint64_t s = first + 1; s <= last; ++s) {
    const auto t0 = Clock::now();
    StepCost cost;
    state->kick_drift(half, c.dt);
    if (on_grid(s)) state->restore_input_order();  // a resume from this snapshot evaluates the same forces
    state->compute_accelerations(s);
    state->kick(half);
    cost.integrate = state->integrate_ms();  // waits for the kick: the step is complete on the device
    cost.wall = ms_since(t0);
    const StageTimes t = field->times();
    cost.forces = t.evaluate_ms;
    cost.tree = t.get("tree");
    cost.plan = t.get("plan");
    cost.transfer = t.get("transfer");
    costs.push_back(cost);
    outputs(s);
    result.last_step = s;
    meter.step(s);
  }
  log_costs(costs, diagnostics_ms, log);
  if (!energy.rows().empty())
    log << "energy: rel_energy_error " << format_double(energy.rows().back().rel_energy_error) << " at step "
        << energy.rows().back().step << " (" << energy.rows().size() << " rows in energy.csv)\n";
  if (!c.timing_csv.empty()) {
    if (costs.empty())
      log << "timing: no step was run, so no row was written to " << c.timing_csv << "\n";
    else
      write_timing_row(c, k, dim, n, level, costs, diagnostics_ms, output_ms, log);
  }
  return result;
}

}  // namespace nf::sim
