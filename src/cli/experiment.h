#pragma once
//! Experiments: a sweep described by an ini file (Boost.Program_options config syntax, the CLI's
//! keys plus `mode = bench | validate | tree`), results to results/NAME/<device>.csv, resumable.
//! A `[reduced]` section holds the overrides for machines without a GPU; it is applied with
//! --reduced, and on its own (saying so) when this machine has no usable GPU.

#include <map>
#include <ostream>
#include <string>

#include "cli/commands.h"
#include "cli/sweep.h"

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

//! What an experiment file asks for, merged with the command line's overrides.
struct ExperimentSettings {
  SweepConfig sweep;
  std::string mode, description;  //!< mode: bench, validate or tree
  int threads = 0;                 //!< the file's (or the command line's) threads key
  bool reduced = false;            //!< the [reduced] section was applied
  bool auto_reduced = false;       //!< ... on its own, because this machine has no usable GPU
  bool reduced_description = false;  //!< the description is the [reduced] section's own
  std::map<std::string, long> key_lines;  //!< "key" or "reduced.key" -> the file's line that sets it
};

//! Parses the text of the experiment file r.ini (errors name r.ini) with r's overrides and the
//! [reduced] rule; checks the keys and the mode, not the sweep (check_sweep). Reads no file: the
//! fuzz target fuzz/fuzz_experiment.cc feeds it bytes (docs/design.md §9).
ExperimentSettings parse_experiment(const ExperimentRun& r, const std::string& text);

//! Runs one experiment; returns the sweep's exit code (validate: 1 if something FAILed).
//! Everything that would stop it (bad keys, GPU kernels without a GPU, --reduced without a
//! [reduced] section) is refused before any work.
int run_experiment(const ExperimentRun& r, std::ostream& out, std::ostream& err);

//! What a sweep measures, from its keys in force: "2D uniform-exact, kernels a,b, level 5, P =
//! 8,16, float" (the line under an experiment's description, which may state the full scale).
std::string sweep_summary(const SweepConfig& c);

//! NAME of experiments/NAME.ini.
std::string experiment_name(const std::string& ini);

}  // namespace nf::cli
