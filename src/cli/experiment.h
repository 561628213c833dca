#pragma once
//! Experiments: a sweep described by an ini file (Boost.Program_options config syntax, the CLI's
//! keys plus `mode = bench | validate | tree`), results to results/NAME/<device>.csv, resumable.
//! A `[reduced]` section holds the overrides for machines without a GPU; it is applied with
//! --reduced, and on its own (saying so) when this machine has no usable GPU.

#include <ostream>
#include <string>

#include "cli/commands.h"

namespace nf::cli {

struct ExperimentRun {
  std::string ini;           //!< experiments/NAME.ini
  std::string results_dir = "results";
  std::string output;        //!< explicit results file (else results_dir/NAME/<device>.csv)
  bool reduced = false;      //!< apply the [reduced] section (also applied without a GPU)
  int threads = 0;           //!< --threads of the caller (reproduce), unless the file or overrides set it
  Args overrides;            //!< command-line options, stronger than the file and its [reduced] section
  bool check_only = false;   //!< parse and check everything, run nothing (reproduce checks all files first)
};

//! Runs one experiment; returns the sweep's exit code (validate: 1 if something FAILed).
//! Everything that would stop it (bad keys, GPU kernels without a GPU, --reduced without a
//! [reduced] section) is refused before any work.
int run_experiment(const ExperimentRun& r, std::ostream& out, std::ostream& err);

//! NAME of experiments/NAME.ini.
std::string experiment_name(const std::string& ini);

}  // namespace nf::cli
