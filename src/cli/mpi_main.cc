// nearfield-mpi: the commands forces, validate, bench and simulate over several processes under
// MPI (docs/design.md §15, "Under MPI"). Every rank runs the same command on the same input; the
// near-field kernel's method is spread over the ranks (one part each: a CPU kernel with OpenMP
// inside the rank, or a GPU kernel on one GPU per rank), and every rank receives the whole
// result, so all of them take the same steps. Only rank 0 prints and writes files. A refusal on
// any rank is agreed by all (distributed/process_group.h): rank 0 prints the one message, and
// every rank finalizes MPI and exits with the same status.
//   mpirun -np 2 nearfield-mpi forces --dist plummer --dim 3 --n 100000 --level 4 --kernel cpu-n3 --output acc.csv
#include <mpi.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <streambuf>

#include "cli/commands.h"
#include "distributed/mpi_processes.h"
#include "io/output_file.h"

namespace {

const char* const kUsage =
    "usage: mpirun -np R nearfield-mpi (forces | validate | bench | simulate) [options]\n"
    "  the command of `nearfield` with the same options; its near-field kernel (CPU or GPU) is spread over\n"
    "  the R processes (one part each, OpenMP threads inside a process: set OMP_NUM_THREADS or --threads);\n"
    "  rank 0 prints and writes the outputs. Other commands run in one process: use nearfield.\n";

// A stream buffer that drops everything (what ranks other than 0 would print).
class Discard final : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

bool spread_command(const std::string& c) {
  return c == "forces" || c == "validate" || c == "bench" || c == "simulate";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::shared_ptr<nf::ProcessGroup> group = nf::mpi_process_group();
  nf::set_process_group(group);
  const bool root = group->rank() == 0;
  nf::set_outputs_discarded(!root);
  Discard nothing;
  std::ostream quiet(&nothing);
  std::ostringstream captured;  // a rank other than 0: its messages, sent to rank 0 if it fails first
  std::streambuf* const cout_buffer = std::cout.rdbuf();  // put back before `nothing` goes away
  std::streambuf* const cerr_buffer = std::cerr.rdbuf();
  if (!root) std::cout.rdbuf(&nothing), std::cerr.rdbuf(&nothing);
  std::ostream& out = root ? std::cout : quiet;
  std::ostream& err = root ? static_cast<std::ostream&>(std::cerr) : captured;

  const nf::cli::Args args(argv + 1, argv + argc);
  int code = 0;
  bool elsewhere = false;  // another rank failed first
  try {
    // Ranks started with other commands or options (mpirun's A : B form, a script that differs by
    // host) had aborted inside MPI, hung, or mixed two runs' forces in one file with exit 0.
    if (!group->same_on_every_rank(nf::arguments_digest(args))) {
      err << "nearfield-mpi: error: the " << group->size()
          << " MPI processes were started with different arguments: every rank must run the same command with the "
             "same options\n";
      code = 2;
    } else if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      (args.empty() ? err : out) << kUsage;
      code = args.empty() ? 2 : 0;
    } else if (!spread_command(args[0])) {
      err << "nearfield-mpi: error: '" << args[0] << "' is not a command nearfield-mpi spreads over processes\n"
          << kUsage;
      code = 2;
    } else {
      code = nf::cli::run(args, out, err);
    }
  } catch (const nf::AgreedFailure&) {
    elsewhere = true;
  }
  if (group->broken()) {  // failed inside a collective the others are still in: nothing can be agreed
    std::fprintf(stderr, "nearfield-mpi: rank %d failed inside an exchange; the other ranks cannot be told: aborting\n%s",
                 group->rank(), captured.str().c_str());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  // The end of a run is one more agreement: a rank that failed after the last collective (rank 0
  // writing its outputs) reaches the others there.
  if (!elsewhere && code < 2) {
    try {
      code = static_cast<int>(group->agreed_max(code));
    } catch (const nf::AgreedFailure&) {
      elsewhere = true;
    }
  }
  if (elsewhere || code >= 2) {
    const nf::ProcessGroup::Failure f = elsewhere ? group->failed_elsewhere() : group->fail(code, captured.str());
    if (root && f.rank != 0) std::cerr << "nearfield-mpi: rank " << f.rank << ": " << f.message << std::flush;
    code = f.code;
  }
  std::cout.flush();
  std::cout.rdbuf(cout_buffer);
  std::cerr.rdbuf(cerr_buffer);
  MPI_Finalize();
  return code;
}
