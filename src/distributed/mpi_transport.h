#pragma once
//! Host-memory messages between processes under MPI, as a Transport (exchange.h): one part per
//! process, part = rank in MPI_COMM_WORLD. Built only when CMake finds MPI. It lets the CPU tests
//! run the multi-process path (every rank computes the same decomposition and posts only its own
//! part's messages) without GPUs; GPU runs across processes use NcclTransport's per-rank
//! constructor instead, with MPI only to share NCCL's id (README "Several GPUs").

#include <cstddef>
#include <vector>

#include "distributed/exchange.h"

namespace nf {

class MpiTransport final : public Transport {
 public:
  MpiTransport();
  ~MpiTransport() override;
  void group_start() override;
  void send(int part, int peer, const void* data, std::size_t bytes) override;
  void recv(int part, int peer, void* data, std::size_t bytes) override;
  //! Waits for every message of the group.
  void group_end() override;

 private:
  struct Requests;
  Requests* requests_;
  int rank_ = 0;
};

}  // namespace nf
