#include "distributed/mpi_transport.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace nf {
namespace {

// MPI counts are ints: a message is cut into pieces of at most 1 GiB, tagged by piece number (both
// sides cut alike, since the plan gives both the same size).
constexpr std::size_t kPiece = std::size_t(1) << 30;

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(what) + " failed: " + text);
}

}  // namespace

struct MpiTransport::Requests {
  std::vector<MPI_Request> all;
};

MpiTransport::MpiTransport() : requests_(new Requests) {
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
}
MpiTransport::~MpiTransport() { delete requests_; }

void MpiTransport::group_start() { requests_->all.clear(); }

void MpiTransport::send(int part, int peer, const void* data, std::size_t bytes) {
  if (part != rank_) throw std::logic_error("MpiTransport: part " + std::to_string(part) + " is not this rank's");
  const char* p = static_cast<const char*>(data);
  for (std::size_t at = 0, piece = 0; at < bytes; at += kPiece, ++piece) {
    requests_->all.emplace_back();
    check(MPI_Isend(p + at, static_cast<int>(std::min(kPiece, bytes - at)), MPI_BYTE, peer, static_cast<int>(piece),
                    MPI_COMM_WORLD, &requests_->all.back()),
          "MPI_Isend");
  }
}

void MpiTransport::recv(int part, int peer, void* data, std::size_t bytes) {
  if (part != rank_) throw std::logic_error("MpiTransport: part " + std::to_string(part) + " is not this rank's");
  char* p = static_cast<char*>(data);
  for (std::size_t at = 0, piece = 0; at < bytes; at += kPiece, ++piece) {
    requests_->all.emplace_back();
    check(MPI_Irecv(p + at, static_cast<int>(std::min(kPiece, bytes - at)), MPI_BYTE, peer, static_cast<int>(piece),
                    MPI_COMM_WORLD, &requests_->all.back()),
          "MPI_Irecv");
  }
}

void MpiTransport::group_end() {
  check(MPI_Waitall(static_cast<int>(requests_->all.size()), requests_->all.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall");
  requests_->all.clear();
}

}  // namespace nf
