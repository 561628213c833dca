#pragma once
//! A CPU near-field kernel spread over several processes (docs/design.md §15, "CPU kernels under
//! MPI"): the same decomposition, exchange plan and evaluate_parts as the GPU path, with each part
//! a CPU method in host memory (methods/host_part_method.h; OpenMP inside it) and host-memory
//! messages between the processes (MpiTransport), or every part in this process over the loopback
//! transport (the tests).

#include <functional>
#include <memory>
#include <vector>

#include "distributed/exchange.h"
#include "distributed/spread_method.h"

namespace nf {

//! Which parts of a spread CPU evaluation this process computes and how they reach the others.
struct HostCluster {
  int parts = 1;                         //!< parts of the whole evaluation, all processes together
  std::vector<int> local;                //!< the parts this process computes, ascending
  std::shared_ptr<Transport> transport;  //!< messages between parts (MPI, or a loopback)
  //! All processes meet at the start of every prepare and evaluation (null: one process). Under
  //! MPI this is where a refusal on one rank reaches the others (ProcessGroup::checkpoint).
  std::function<void()> barrier;
  std::function<double(double)> max_over_processes;  //!< a time's maximum over the processes (null: one process)
};

//! CPU kernel k (it must have a host part factory: the CPU near-field kernels) over `cluster`:
//! every process computes the same decomposition and prepares only its local parts. Times: each
//! process's wall time from the barrier to the end of its last exchange, the longest over them.
std::unique_ptr<ClusterMethod> make_host_cluster_method(const KernelInfo& k, const MethodSetup& s, const Spread& spread,
                                                        HostCluster cluster);

}  // namespace nf
