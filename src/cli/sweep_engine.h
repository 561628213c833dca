#pragma once
//! The one sweep engine behind `bench` and `validate` (docs/design.md §6-§7): it enumerates the
//! points and, in each, the (precision, kernel, spread) cells in the sweep's order; loads each
//! point's particles once and resolves its `--level auto` once; prints progress weighted by
//! estimated_cost; skips cells already in the results file (--resume) or replaces their rows
//! (--remeasure); and appends the results rows. A command supplies a SweepTask: how to measure one
//! cell, giving its table row and its results columns. The points and their loading also serve
//! `bench --tree` (cli/tree_bench.cc).

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/sweep.h"
#include "distributed/spread_method.h"
#include "methods/force_method.h"
#include "methods/registry.h"

namespace nf::cli {

//! One input of a sweep: a file, or a generated distribution (dim, dist) at (level, n) or
//! (level, ppb).
struct SweepPoint {
  InputArgs in;             //!< a single dist and dim
  int level = 0;            //!< kAutoLevel until load_point resolves it
  std::int64_t n = -1, ppb = -1;  //!< -1 when not given
  bool auto_level = false;  //!< the level was chosen by --level auto's rule
  //! "uniform", "plummer", ... or the input file.
  std::string distribution() const { return in.input.empty() ? in.dist : in.input; }
};

//! The points of a sweep in order: dim, then dist (or the one input file), then level, then ppb or n.
std::vector<SweepPoint> sweep_points(const SweepConfig& c);

//! A point with its particles, loaded once, and the setup every cell of it starts from:
//! softening, domain, and the level (--level auto resolved).
struct LoadedPoint {
  SweepPoint point;
  Particles particles;
  MethodSetup setup;
};
//! Loads `pt` and resolves its domain and level for `kernels` (the level rule's line, if any,
//! printed on `out`).
LoadedPoint load_point(const SweepConfig& c, SweepPoint pt, const std::vector<std::string>& kernels,
                       std::ostream& out);

//! A results row (or the part of one): column -> value.
using ResultsRow = std::map<std::string, std::string>;

//! The columns that identify a measurement (--resume skips rows that match them all, --remeasure
//! replaces them): the point, kernel, precision, mask, the spread, a full method's order as
//! asked (--order, 0 meaning "from --accuracy"), and validate's sample size (empty: every particle).
ResultsRow point_key(const SweepConfig& c, const LoadedPoint& at, const std::string& kernel, Precision precision,
                     const std::string& mask, const Spread& spread = {1, CrossPairs::automatic}, int order = -1);

//! Measurement columns followed by the context columns (measure/context.h).
std::vector<std::string> with_context(std::vector<std::string> columns);

//! One measurement of a sweep: a point's precision, kernel and spread.
struct SweepCell {
  std::size_t point_index;      //!< which point of the sweep (the cells of a point follow each other)
  const LoadedPoint& at;
  std::size_t precision_index;  //!< which item of --precision (a point's cells of one precision follow each other)
  Precision precision;
  const KernelInfo& kernel;
  Spread spread;
  int order;                //!< full methods: the --order item (0: from --accuracy); -1 for other kernels
  const ResultsRow& key;    //!< point_key of this cell
  //! The point's setup for this cell's kernel: precision, and a full method's far-field options.
  MethodSetup setup(const SweepConfig& c) const;
};

//! What measuring a cell gives: its row of the printed table, and its results columns beyond the
//! key and the context (written only when the sweep has an output file).
struct CellResult {
  std::vector<std::string> table_row;
  ResultsRow columns;
  std::string note;  //!< a line the sweep prints before going on (a measured order's search); empty: none
};

//! What a command measures over a sweep; the engine does the rest.
class SweepTask {
 public:
  virtual ~SweepTask() = default;
  //! The `mask` column of kernel k's rows.
  virtual std::string mask(const KernelInfo& k) const = 0;
  //! The progress line of a cell (cell_summary, with or without more).
  virtual std::string progress_line(const SweepCell& cell) const = 0;
  //! Measures a cell that is not skipped.
  virtual CellResult measure(const SweepCell& cell) = 0;
  //! The table row of a cell skipped because `row` (its results row, measured earlier) is already
  //! in the results file: the recorded values, so a rerun still shows the whole table.
  virtual std::vector<std::string> recorded_row(const SweepCell& cell, const ResultsRow& row) = 0;
};

//! A recorded results value in a table: `format` applied to the number, "-" when the column is
//! empty or not a number.
std::string recorded_value(const ResultsRow& row, const std::string& column, const char* format);
//! The kernel's name in a table row built from a recorded results row: kernel_label's text from
//! the row (its order `p` for a full method), marked with a trailing "*" (see Sweep::recorded).
std::string recorded_label(const KernelInfo& k, const ResultsRow& row);

//! The kernel's name in a table row: "cpu-fmm p8" for a full method (with the order it used).
std::string kernel_label(const KernelInfo& k, const ForceMethod& m);

//! "KERNEL PRECISION DIM DIST level K N n[ P ppb][ on G GPUs][ order p]": a cell in a progress line.
std::string cell_summary(const SweepCell& cell, bool with_ppb);

//! A sweep: its points and, for each, its cells (precision, then kernel, then spread).
class Sweep {
 public:
  //! Parses the sweep's lists (points, kernels, precisions, --gpus, --cross-pairs); reads and
  //! writes nothing yet.
  explicit Sweep(const SweepConfig& c);
  //! True when some spread runs on more than one GPU (the tables add their columns).
  bool multi_gpu() const { return multi_gpu_; }
  //! After run: the table rows taken from the results file (cells skipped by --resume, marked
  //! with a "*" after the kernel's name), 0 when every row was measured now.
  std::size_t recorded() const { return recorded_; }
  //! The note a command prints under its table when recorded() > 0 (empty otherwise).
  std::string recorded_note() const;
  //! Runs every cell through `task`: the results file (c.output, if any) opened with `columns`,
  //! progress on `err`, each cell skipped or measured, its rows added. Returns the table (headed
  //! by `header`) for the caller to print with its notes.
  Table run(SweepTask& task, std::vector<std::string> header, const std::vector<std::string>& columns,
            std::ostream& out, std::ostream& err);

 private:
  struct Cell {
    std::size_t precision_index;
    Precision precision;
    const KernelInfo* kernel;
    Spread spread;
    int order;  // full methods only, else -1
  };
  std::vector<double> costs() const;

  const SweepConfig& c_;
  std::vector<SweepPoint> points_;
  std::vector<std::string> kernels_;
  std::vector<Cell> cells_;  // of every point, in order
  bool multi_gpu_ = false;
  std::size_t recorded_ = 0;
};

}  // namespace nf::cli
