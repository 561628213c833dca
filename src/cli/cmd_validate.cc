// nearfield validate: kernels against the float64 all-pairs ground truth.
#include "cli/sweep_checks.h"
#include "core/errors.h"

namespace nf::cli {

namespace {

// What `validate` runs when the command line leaves it open (docs/design.md §5): every kernel
// this machine can run, on a generated uniform 2D set of kDefaultN particles, at --level auto.
constexpr const char* kDefaultN = "10000";

}  // namespace

int cmd_validate(const Args& args, std::ostream& out, std::ostream& err) {
  SweepConfig c;
  int threads = 0;
  po::options_description d("validate options");
  d.add_options()("help", "this help");
  add_sweep_options(d, c, SweepMode::validate);
  add_threads_option(d, threads);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  std::string("usage: nearfield validate [--kernel a,b] [--input FILE | --dist D --dim 2|3 (--n N | "
                              "--level K --ppb P)] [--level K|auto] [--precision float,double] [--softening EPS] "
                              "[--sample M [--seed S]] [--threads T] [--output results.csv]\n\n"
                              "Defaults: every kernel this machine can run (--kernel); without --input, --n or --ppb "
                              "a generated uniform 2D set of ") +
                      kDefaultN +
                      " particles (--dist uniform --dim 2 --n " + kDefaultN +
                      " --seed 1); --level auto (the rule of README \"Choosing the level\"; --ppb needs --level K). "
                      "Exit status 1 if any kernel fails its tolerance."))
    return 0;
  if (vm.count("sample") && c.sample.empty()) throw UsageError("--sample: no value given (an integer M >= 1)");
  if (c.in.input.empty() && c.in.n.empty() && c.in.ppb.empty()) {
    c.in.n = kDefaultN;
    err << "validate: no input given: a generated " << c.in.dist << " " << c.in.dim << "D set of " << kDefaultN
        << " particles (--n " << kDefaultN << ", --seed " << c.in.seed << ")\n";
  }
  if (c.levels.empty()) {
    if (!c.in.ppb.empty()) throw UsageError("--level K is required with --ppb (the level defines the input)");
    c.levels = "auto";
  }
  check_sweep(c, true);
  apply_threads(threads);
  return run_validate(c, out, err);
}

}  // namespace nf::cli
