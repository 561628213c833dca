// nearfield validate: kernels against the float64 all-pairs ground truth.
#include "cli/sweep_checks.h"
#include "core/errors.h"

namespace nf::cli {

int cmd_validate(const Args& args, std::ostream& out, std::ostream& err) {
  SweepConfig c;
  int threads = 0;
  po::options_description d("validate options");
  d.add_options()("help", "this help");
  add_sweep_options(d, c, SweepMode::validate);
  add_threads_option(d, threads);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield validate [--kernel a,b] (--input FILE | --dist D --dim 2|3 (--n N | --ppb P)) "
                  "--level K [--precision float,double] [--softening EPS] [--sample M [--seed S]] [--threads T] "
                  "[--output results.csv]"))
    return 0;
  if (vm.count("sample") && c.sample.empty()) throw UsageError("--sample: no value given (an integer M >= 1)");
  check_sweep(c, true);
  apply_threads(threads);
  return run_validate(c, out, err);
}

}  // namespace nf::cli
