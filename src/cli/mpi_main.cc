// nearfield-mpi: one near-field evaluation (timed, and optionally written out) over one GPU per
// process under MPI: the path across hosts (README "Several GPUs"). Every rank reads or generates
// the same input and computes the same decomposition; rank 0 makes NCCL's id and MPI broadcasts
// it; each rank drives its own part on the GPU of its rank within its host; rank 0 prints the
// timing and writes the accelerations gathered from every rank.
//   mpirun -np R nearfield-mpi --kernel bpb --dist uniform-fast --dim 2 --n 100000000 --level 11
//       [--precision float|double] [--softening EPS] [--cross-pairs auto|once|twice] [--reps N]
//       [--warmup N] [--output acc.csv]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "io/output_file.h"
#include "io/csv_file.h"
#include "tree/domain.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "methods/force_method.h"
#include "measure/stats.h"
#include "distributed/spread_method.h"
#include "distributed/nccl_transport.h"

namespace {

using namespace nf;

// The rows and accelerations of every rank, on rank 0, in input order.
std::vector<double> gather_accelerations(ClusterMethod& e, std::size_t n, int dim, int rank, int ranks) {
  const std::vector<std::uint32_t> rows = e.rows_computed_here();
  const std::vector<double> all = e.accelerations();
  std::vector<double> mine(rows.size() * dim);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int c = 0; c < dim; ++c) mine[i * dim + c] = all[std::size_t(rows[i]) * dim + c];
  const int count = static_cast<int>(rows.size());
  std::vector<int> counts(ranks), at(ranks, 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 1; r < ranks; ++r) at[r] = at[r - 1] + counts[r - 1];
  std::vector<std::uint32_t> every_row(rank == 0 ? n : 0);
  std::vector<double> every_value(rank == 0 ? n * dim : 0);
  MPI_Gatherv(rows.data(), count, MPI_UINT32_T, every_row.data(), counts.data(), at.data(), MPI_UINT32_T, 0,
              MPI_COMM_WORLD);
  MPI_Datatype acc;  // one particle's accelerations: counts stay in particles
  MPI_Type_contiguous(dim, MPI_DOUBLE, &acc);
  MPI_Type_commit(&acc);
  MPI_Gatherv(mine.data(), count, acc, every_value.data(), counts.data(), at.data(), acc, 0, MPI_COMM_WORLD);
  MPI_Type_free(&acc);
  if (rank != 0) return {};
  std::vector<double> out(n * dim, std::nan(""));
  for (std::size_t i = 0; i < every_row.size(); ++i)
    for (int c = 0; c < dim; ++c) out[std::size_t(every_row[i]) * dim + c] = every_value[i * dim + c];
  return out;
}

int run(int argc, char** argv, int rank, int ranks) {
  namespace po = boost::program_options;
  cli::InputArgs in;
  std::string kernel, precision = "float", cross_pairs = "auto", output;
  int level = -1, reps = 5, warmup = 1;
  double softening = 1e-4;
  po::options_description d("nearfield-mpi options (run under mpirun, one process per GPU)");
  d.add_options()("help", "this help")("kernel", po::value(&kernel)->required(), "GPU near-field kernel")(
      "level", po::value(&level)->required(), "tree level K")(
      "precision", po::value(&precision)->default_value(precision), "float or double")(
      "softening", po::value(&softening)->default_value(softening), "softening length eps >= 0")(
      "cross-pairs", po::value(&cross_pairs)->default_value(cross_pairs), "auto, once or twice")(
      "reps", po::value(&reps)->default_value(reps), "timed evaluations")(
      "warmup", po::value(&warmup)->default_value(warmup), "untimed evaluations first")(
      "output", po::value(&output), "accelerations CSV (rank 0 writes it)");
  cli::add_input_options(d, in);
  po::variables_map vm;
  std::ostringstream help;
  if (!cli::parse_args(cli::Args(argv + 1, argv + argc), d, vm, help, "usage: mpirun -np R nearfield-mpi --kernel NAME "
                                                                        "--level K (--input F | --dist D --n N) ...")) {
    if (rank == 0) std::cout << help.str();
    return 0;
  }
  if (!output.empty()) check_output_path(output);
  const KernelInfo& k = find_kernel(kernel);
  if (!k.gpu() || !k.near_field()) throw UsageError(k.name + " is not a GPU near-field kernel");
  // The GPU of this rank: its place among the ranks of its host.
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
  int local = 0;
  MPI_Comm_rank(host, &local);
  MPI_Comm_free(&host);
  gpu::require("nearfield-mpi");
  if (local >= gpu::device_count())
    throw UsageError("rank " + std::to_string(rank) + " is process " + std::to_string(local + 1) +
                     " on its host, which has " + std::to_string(gpu::device_count()) + " CUDA devices");
  gpu::set_device(local);
  load_nccl();

  const Particles p = cli::load_input(in, in.n.empty() ? -1 : cli::single_int(in.n, "n"), level,
                                      in.ppb.empty() ? -1 : cli::single_int(in.ppb, "ppb"));
  MethodSetup s;
  s.level = level;
  s.domain = default_domain(p);
  s.softening = softening;
  s.precision = parse_precision(precision);
  const Spread spread{ranks, parse_cross_pairs(cross_pairs)};

  std::string id(128, '\0');
  if (rank == 0) id = nccl_unique_id();
  MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  GpuCluster c;
  c.parts = ranks;
  c.local = {rank};
  c.device = {local};
  c.transport = std::make_shared<NcclTransport>(rank, ranks, local, id);
  c.barrier = [] { MPI_Barrier(MPI_COMM_WORLD); };
  c.max_over_processes = [](double v) {
    double m = v;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
  };
  check_setup(k, s, p);
  auto e = make_cluster_method(k, s, spread, c);
  e->prepare(p);
  for (int r = 0; r < warmup; ++r) {
    e->evaluate();
    e->wait();
  }
  std::vector<double> ms, comm;
  for (int r = 0; r < reps; ++r) {
    e->evaluate();
    const StageTimes t = e->times();
    ms.push_back(t.evaluate_ms);
    comm.push_back(t.get("comm"));
  }
  if (rank == 0 && reps > 0) {
    const TimingStats t = summarize(ms);
    std::cout << kernel << " on " << ranks << " GPUs (one process each), N = " << p.size() << ", level " << level
              << ", cross pairs " << to_string(resolve_cross_pairs(k, spread.cross)) << ": median " << t.median
              << " ms [" << t.min << ", " << t.max << "], communication " << summarize(comm).median << " ms\n";
  }
  if (!output.empty()) {
    const std::vector<double> acc = gather_accelerations(*e, p.size(), p.dim, rank, ranks);
    if (rank == 0) {
      write_accelerations_csv(output, p, acc);
      std::cout << "wrote " << p.size() << " accelerations to " << output << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int code = 0;
  try {
    code = run(argc, argv, rank, ranks);
  } catch (const nf::UsageError& e) {
    std::cerr << "nearfield-mpi (rank " << rank << "): error: " << e.what() << "\n";
    code = 2;
  } catch (const nf::InputError& e) {
    std::cerr << "nearfield-mpi (rank " << rank << "): error: " << e.what() << "\n";
    code = 2;
  } catch (const std::exception& e) {
    std::cerr << "nearfield-mpi (rank " << rank << "): failed: " << e.what() << "\n";
    code = 3;
  }
  if (code != 0) MPI_Abort(MPI_COMM_WORLD, code);  // the other ranks may wait in a collective
  MPI_Finalize();
  return code;
}
