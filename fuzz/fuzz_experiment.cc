// libFuzzer target: experiment files (cli/experiment.h, docs/design.md §8) on any text: parsed
// with their [reduced] section, then the sweep checked as `nearfield experiment` checks it before
// any work (the results file left out: nothing is created). Refusals are InputError and
// UsageError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/experiment.h"
#include "cli/sweep_checks.h"
#include "core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nf::cli::ExperimentRun run;
  run.ini = "fuzz.ini";
  try {
    nf::cli::ExperimentSettings s = nf::cli::parse_experiment(run, std::string(reinterpret_cast<const char*>(data), size));
    s.sweep.output.clear();
    nf::cli::check_sweep(s.sweep, s.mode == "validate");
  } catch (const nf::InputError&) {
  } catch (const nf::UsageError&) {
  }
  return 0;
}
