// nearfield bench: time kernels (or the GPU tree build) over a sweep.
#include "cli/sweep_checks.h"
#include "core/errors.h"
#include "methods/registry.h"

namespace nf::cli {

int cmd_bench(const Args& args, std::ostream& out, std::ostream& err) {
  SweepConfig c;
  int threads = 0;
  po::options_description d("bench options");
  d.add_options()("help", "this help")("list", "list the kernels and exit");
  add_sweep_options(d, c, SweepMode::bench);
  add_threads_option(d, threads);
  po::variables_map vm;
  if (!parse_args(args, d, vm, out,
                  "usage: nearfield bench [--kernel a,b] (--input FILE | --dist D --dim 2|3 (--n N,.. | --ppb P,..)) "
                  "--level K,.. [--precision float,double] [--reps R] [--threads T] [--output results.csv [--resume|--remeasure]] "
                  "[--tree]"))
    return 0;
  if (vm.count("list")) {
    for (const auto& [name, value] : vm)  // filters had been accepted and ignored: the list is every kernel
      if (name != "list" && !value.defaulted())
        throw UsageError("--list prints every kernel and exits; it takes no other option (--" + name + ")");
    Table t({"kernel", "traits", "description"});
    for (const KernelInfo& k : all_kernels()) t.add({k.name, k.trait_list(), k.summary});
    t.print(out);
    return 0;
  }
  check_sweep(c);
  apply_threads(threads);
  if (!c.tree) note_threads(vm, sweep_kernels(c), err);
  return run_bench(c, out, err);
}

}  // namespace nf::cli
