// The agreements, gathers and broadcasts of process_group.h with MPI (docs/design.md §15).
#include "distributed/mpi_processes.h"

#include <mpi.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/host_memory.h"
#include "distributed/mpi_transport.h"

namespace nf {
namespace {

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
    MPI_Comm_rank(host, &on_host_);
    int sharing = 1;
    MPI_Comm_size(host, &sharing);
    MPI_Comm_free(&host);
    set_host_memory_sharers(sharing);  // each rank's memory check takes its share of the host
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int rank_on_host() const override { return on_host_; }

  // Every agreement is the same collective: the maximum of (failed, value) over the ranks.
  double agreed_max(double value) override {
    double in[2] = {0.0, value}, out[2] = {0.0, 0.0};
    MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (out[0] != 0.0) throw AgreedFailure{};
    return out[1];
  }
  Failure fail(int code, const std::string& message) override {
    double in[2] = {1.0, 0.0}, out[2] = {0.0, 0.0};
    MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return settle(true, code, message);
  }
  Failure failed_elsewhere() override { return settle(false, 0, ""); }

  std::vector<unsigned char> all_gather(const void* data, std::size_t count, std::size_t record_bytes) override {
    MPI_Datatype record;
    MPI_Type_contiguous(static_cast<int>(record_bytes), MPI_BYTE, &record);
    MPI_Type_commit(&record);
    const int mine = static_cast<int>(count);
    std::vector<int> counts(size_), at(size_, 0);
    MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    long long total = counts[0];
    for (int r = 1; r < size_; ++r) {
      at[r] = at[r - 1] + counts[r - 1];
      total += counts[r];
    }
    if (total >= (1LL << 31)) throw std::runtime_error("all_gather: 2^31 records or more");
    std::vector<unsigned char> out(static_cast<std::size_t>(total) * record_bytes);
    MPI_Allgatherv(data, mine, record, out.data(), counts.data(), at.data(), record, MPI_COMM_WORLD);
    MPI_Type_free(&record);
    return out;
  }
  std::string broadcast(std::string bytes) override {
    MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
    return bytes;
  }
  std::shared_ptr<Transport> transport() override {
    if (!transport_) transport_ = std::make_shared<MpiTransport>();
    return transport_;
  }

 private:
  // After a failed agreement: the lowest failing rank's status reaches every rank, its message rank 0.
  Failure settle(bool failed, int code, std::string message) {
    const int me = failed ? rank_ : size_;
    int first = size_;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD);
    if (first != 0 && rank_ == first) {
      const int length = static_cast<int>(message.size());
      MPI_Send(&length, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      MPI_Send(message.data(), length, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    } else if (first != 0 && rank_ == 0) {
      int length = 0;
      MPI_Recv(&length, 1, MPI_INT, first, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      message.assign(static_cast<std::size_t>(length), '\0');
      MPI_Recv(message.data(), length, MPI_CHAR, first, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return {first, code, first == rank_ || rank_ == 0 ? message : std::string()};
  }

  int rank_ = 0, size_ = 1, on_host_ = 0;
  std::shared_ptr<Transport> transport_;
};

}  // namespace

std::shared_ptr<ProcessGroup> mpi_process_group() { return std::make_shared<MpiProcessGroup>(); }

}  // namespace nf
