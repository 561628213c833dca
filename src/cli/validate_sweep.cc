// `validate` over a sweep (docs/design.md §4): checks one cell (point, precision, kernel, spread)
// against the float64 ground truth as the engine of cli/sweep_engine.h asks, and prints the
// table, the references used and the verdict. With --sample M the ground truth is computed, and
// the kernel compared, at M targets of each point only.
#include <optional>
#include <tuple>
#include <utility>

#include "cli/sweep_engine.h"
#include "methods/adaptive_method.h"
#include "measure/order_search.h"
#include "core/numbers.h"
#include "distributed/process_group.h"
#include "measure/validation.h"

namespace nf::cli {

namespace {

std::string sci(double v) { return format_number("%.3e", v); }

// Checks one cell: its method's accelerations against the ground truth of its point and
// precision (computed once, when the first cell of them is measured: the near field for
// near-field and all-pairs kernels, every pair for full methods; with --sample at the point's
// sampled targets only, the same sum), a deterministic kernel repeated bit for bit, and a spread
// run that must equal one GPU compared with it.
class ValidateTask : public SweepTask {
 public:
  ValidateTask(const SweepConfig& c, bool multi) : c_(c), multi_(multi) {}

  std::string mask(const KernelInfo& k) const override { return k.uses_tree() ? "" : "near"; }
  std::string progress_line(const SweepCell& cell) const override { return "validate " + cell_summary(cell, false); }

  std::vector<std::string> recorded_row(const SweepCell& cell, const ResultsRow& row) override {
    const auto value = [&](const char* column) {
      const auto it = row.find(column);
      return it == row.end() || it->second.empty() ? std::string("-") : it->second;
    };
    const bool pass = value("status") == "PASS";
    all_pass_ = all_pass_ && pass;
    std::vector<std::string> t = {recorded_label(cell.kernel, row), to_string(cell.precision),
                                  std::to_string(cell.at.point.level), std::to_string(cell.at.particles.size())};
    if (!c_.sample.empty()) t.push_back(value("sample") == "-" ? "all" : value("sample"));
    for (const char* column : {"rel_l2", "p99_rel", "max_rel", "momentum", "tolerance"})
      t.push_back(recorded_value(row, column, "%.3e"));
    t.push_back(value("repeat"));
    if (multi_) {
      t.push_back(std::to_string(cell.spread.gpus));
      t.push_back(cell.spread.gpus > 1 || process_count() > 1 ? to_string(cell.spread.cross) : "-");
      t.push_back(value("one_gpu"));
    }
    t.push_back(pass ? "PASS" : "FAIL");
    return t;
  }

  CellResult measure(const SweepCell& cell) override {
    const KernelInfo& k = cell.kernel;
    const Particles& p = cell.at.particles;
    const Precision prec = cell.precision;
    const Mask ref_mask = k.far_field() ? Mask::all : Mask::near;
    const bool sample = sampled(c_, p.size());
    if (sample && targets_of_ != cell.point_index) {  // one sample per point, for every kernel of it
      targets_ = sample_targets(p.size(), static_cast<std::size_t>(parse_sample(c_)), c_.in.seed);
      targets_of_ = cell.point_index;
    }
    Reference& ref = refs_[ref_mask == Mask::all];
    // A near-field reference belongs to a level: at --level auto the kernels of a point may each
    // have their own (methods/auto_level.h), so it is made again when the level changes.
    const std::tuple<std::size_t, std::size_t, int> ref_of{cell.point_index, cell.precision_index,
                                                           ref_mask == Mask::near ? cell.at.point.level : -1};
    if (ref.of != ref_of) {
      std::string note;
      if (sample) {
        ref.values = sampled_ground_truth(p, cell.at.setup, prec, targets_, ref.name, ref_mask);
        ref.name += " (--seed " + std::to_string(c_.in.seed) + ")";
      } else {
        ref.values = ground_truth(p, cell.at.setup, prec, c_.cpu_reference_limit, ref.name, ref_mask);
        if (!c_.sample.empty()) note = " (every particle: --sample " + c_.sample + " >= N)";
      }
      ref.of = ref_of;
      references_.push_back(to_string(prec) + std::string(" kernels") + (k.far_field() ? " (full methods), " : ", ") +
                            cell.at.point.distribution() + " " + std::to_string(p.dim) + "D, level " +
                            std::to_string(cell.at.point.level) + ", N = " + std::to_string(p.size()) + ": " +
                            ref.name + note);
    }
    MethodSetup s = cell.setup(c_);
    if (!k.uses_tree()) s.mask = Mask::near;
    const auto method = make_spread_method(k, s, p, cell.spread);
    method->prepare(p);
    std::vector<double> got;
    KernelCheck check = check_method(*method, k, p, ref.values, &got, sample ? &targets_ : nullptr);
    if ((cell.spread.gpus > 1 || process_count() > 1) && matches_one_gpu_bitwise(k, cell.spread.cross)) {
      const auto one = make_method(k, s, p);  // one GPU (one process) must give the same bits
      one->prepare(p);
      one->evaluate();
      check.one_gpu_checked = true;
      check.one_gpu_equal = bitwise_equal(got, one->accelerations());
      check.pass = check.pass && check.one_gpu_equal;
    }
    const Metrics& m = check.metrics;
    const bool ok = check.pass;
    const double tol = tolerance(k, s, p.dim, p.size());  // the order as asked: auto is held to the accuracy target
    all_pass_ = all_pass_ && ok;
    const std::string repeat = !check.repeat_checked ? "-" : check.repeatable ? "bitwise" : "DIFFERS";
    const std::string one_gpu = !check.one_gpu_checked ? "-" : check.one_gpu_equal ? "bitwise" : "DIFFERS";

    CellResult out;
    out.table_row = {kernel_label(k, *method), to_string(prec), std::to_string(cell.at.point.level),
                     std::to_string(p.size())};
    if (!c_.sample.empty()) out.table_row.push_back(sample ? std::to_string(targets_.size()) : "all");
    for (const std::string& v : {sci(m.rel_l2), sci(m.p99_rel), sci(m.max_rel), sci(m.momentum), sci(tol), repeat})
      out.table_row.push_back(v);
    if (multi_) {
      out.table_row.push_back(std::to_string(cell.spread.gpus));
      out.table_row.push_back(cell.spread.gpus > 1 || process_count() > 1 ? to_string(cell.spread.cross) : "-");
      out.table_row.push_back(one_gpu);
    }
    out.table_row.push_back(ok ? "PASS" : "FAIL");
    ResultsRow& row = out.columns;
    row["reference"] = ref.name;
    row["rel_l2"] = format_double(m.rel_l2);
    row["p99_rel"] = format_double(m.p99_rel);
    row["max_rel"] = format_double(m.max_rel);
    row["momentum"] = format_double(m.momentum);
    row["tolerance"] = format_double(tol);
    if (k.far_field()) {
      row["p"] = std::to_string(method->setup().order);
      row["near_kernel"] = method->near_kernel();
      if (k.adaptive()) row["leaf_size"] = std::to_string(leaf_size(method->setup()));
      if (const OrderSearch* o = method->order_search()) {
        row["order_search_ms"] = format_double(o->ms);
        out.note = o->describe(k.name);
      }
    }
    row["repeat"] = repeat;
    row["one_gpu"] = one_gpu == "-" ? "" : one_gpu;
    row["status"] = ok ? "PASS" : "FAIL";
    return out;
  }

  bool all_pass() const { return all_pass_; }
  //! One line per ground truth computed: the inputs it stands for and what computed it.
  const std::vector<std::string>& references() const { return references_; }

 private:
  const SweepConfig& c_;
  bool multi_;
  bool all_pass_ = true;
  std::vector<std::string> references_;
  // The ground truths of (point, --precision item): the near field [0] and every pair [1].
  struct Reference {
    std::vector<double> values;
    std::string name;
    std::optional<std::tuple<std::size_t, std::size_t, int>> of;  // point, precision, level (near mask)
  };
  Reference refs_[2];
  // --sample: the targets of point targets_of_ (drawn once per point).
  std::vector<std::size_t> targets_;
  std::optional<std::size_t> targets_of_;
};

}  // namespace

int run_validate(const SweepConfig& c, std::ostream& out, std::ostream& err) {
  Sweep sweep(c);
  const bool multi = sweep.multi_gpu() || process_count() > 1;  // under MPI: compared with one process too
  ValidateTask task(c, multi);
  std::vector<std::string> header = {"kernel", "precision", "level", "N", "rel_l2", "p99_rel", "max_rel", "momentum",
                                     "tolerance", "repeat", "status"};
  if (multi)
    for (const char* h : {"gpus", "cross", process_count() > 1 ? "vs 1 process" : "vs 1 GPU"}) header.insert(header.end() - 1, h);
  if (!c.sample.empty()) header.insert(header.begin() + 4, "sample");  // after N
  const std::vector<std::string> columns = with_context(
      {"kernel", "dim", "level", "ppb", "n", "distribution", "seed", "precision", "softening", "mask", "reference",
       "rel_l2", "max_rel", "momentum", "tolerance", "repeat", "status", "level_rule", "gpus", "processes", "cross_pairs", "one_gpu",
       "order", "accuracy", "p", "near_kernel", "p99_rel", "sample", "leaf_size", "leaf_rule", "domain", "generator",
       "order_sample", "order_search_ms"});
  sweep.run(task, header, columns, out, err).print(out);
  out << sweep.recorded_note();
  for (const std::string& r : task.references()) out << "reference for " << r << "\n";
  if (sweep.multi_gpu())
    out << "vs 1 GPU: a deterministic kernel computing cross pairs twice must give the one-GPU output bit for bit "
           "(bitwise); others are held to the tolerance only\n";
  if (!c.sample.empty())
    out << "sample: rel_l2, p99_rel and max_rel over the sampled targets only (all: --sample >= N, every particle); "
           "momentum and finiteness over every particle\n";
  out << (task.all_pass() ? "all kernels PASS" : "some kernels FAIL") << "\n";
  return task.all_pass() ? 0 : 1;
}

}  // namespace nf::cli
