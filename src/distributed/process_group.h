#pragma once
//! The processes of a run under MPI (nearfield-mpi), as the distributed layer and the commands see
//! them (docs/design.md §15, "Under MPI"). Plain C++: MPI itself is behind this interface
//! (distributed/mpi_processes.h), so nf_core needs no MPI.
//!
//! Every rank runs the same command on the same input, so they all take the same steps; a method
//! spread over the processes (make_process_method) is where they meet. Refusals are agreed: every
//! collective of a run starts with an agreement, an allreduce of "has a rank failed?". A rank that
//! fails (a bad option, an unreadable file, no GPU on its host) calls fail() instead of its next
//! agreement, which is the one the others are waiting at; all ranks then learn the lowest failing
//! rank, rank 0 prints that rank's message once, and every rank exits with its status. Only a
//! failure in the middle of an exchange (inside a Section) cannot be agreed: that rank aborts.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "distributed/exchange.h"
#include "distributed/spread_method.h"

namespace nf {

//! Thrown on the ranks that did not fail when an agreement finds that one did. Deliberately not a
//! std::exception: it passes through the commands' handlers up to the program's main.
struct AgreedFailure {};

//! See the top of this file.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  //! This process's place among the processes of its host (the GPU it takes).
  virtual int rank_on_host() const = 0;

  //! Collective agreement that no rank failed; throws AgreedFailure when one did.
  void checkpoint() { agreed_max(0); }
  //! Collective: the largest `value` over the ranks, and an agreement (AgreedFailure).
  virtual double agreed_max(double value) = 0;
  //! Collective: true when every rank passed the same `value` (two agreements: max and min).
  bool same_on_every_rank(double value) { return agreed_max(value) == -agreed_max(-value); }
  //! What the ranks agreed after a failure: the lowest failing rank, its exit status, and its
  //! message (on rank 0 and on that rank; empty elsewhere).
  struct Failure {
    int rank = 0;
    int code = 0;
    std::string message;
  };
  //! Instead of the next agreement, on a rank that failed with exit status `code` and `message`.
  virtual Failure fail(int code, const std::string& message) = 0;
  //! On the other ranks after AgreedFailure.
  virtual Failure failed_elsewhere() = 0;

  //! Collective: every rank's `count` records of `record_bytes` bytes, in rank order, on every rank
  //! (call inside a Section; fewer than 2^31 records in all).
  virtual std::vector<unsigned char> all_gather(const void* data, std::size_t count, std::size_t record_bytes) = 0;
  //! Collective: rank 0's `bytes` (the same size on every rank) on every rank.
  virtual std::string broadcast(std::string bytes) = 0;
  //! Host-memory point-to-point messages between the ranks (part = rank).
  virtual std::shared_ptr<Transport> transport() = 0;

  //! Marks the collectives that follow an agreement and end before the next one: a rank that fails
  //! inside one leaves the others inside it, so it cannot be agreed (broken() turns true).
  class Section {
   public:
    explicit Section(ProcessGroup& g);
    ~Section();
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;

   private:
    ProcessGroup& g_;
    int exceptions_;
  };
  //! True once an exception left a Section: the process must abort instead of agreeing.
  bool broken() const { return broken_; }

 private:
  bool broken_ = false;
};

//! The group this process belongs to (set by nearfield-mpi and test_mpi); null: one process.
ProcessGroup* process_group();
//! The processes a near-field evaluation is spread over: the group's size, 1 without one.
int process_count();
//! A 52-bit digest of a command line (exact in a double, for ProcessGroup::same_on_every_rank).
double arguments_digest(const std::vector<std::string>& args);
//! Sets (or with null clears) the process group.
void set_process_group(std::shared_ptr<ProcessGroup> g);

//! Kernel k spread over the ranks of `g`, one part per rank (make_spread_method calls it when a
//! group of more than one process is set): a CPU near-field kernel through its host parts
//! (host_spread_method.h) and MPI messages, a GPU near-field kernel on the GPU of its place on
//! its host with NCCL (its id sent by MPI). Every rank's accelerations() holds every particle's
//! acceleration (gathered from the ranks), so every rank goes on with the same data.
std::unique_ptr<ForceMethod> make_process_method(const KernelInfo& k, const MethodSetup& s, const Particles& like,
                                                 const Spread& spread, ProcessGroup& g);

}  // namespace nf
