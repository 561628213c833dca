#pragma once
//! One force evaluation over the parts of an ExchangePlan, written once for every transport:
//! 1. each part gathers the bodies its peers hold as halo into send buffers;
//! 2. one group of sends and receives moves them (halo bodies land in place, in the receiver's
//!    sorted arrays);
//! 3. each part runs its kernel;
//! 4. with CrossPairs::once, a second group sends the counterforces accumulated on halo particles
//!    back to their owners, which add them onto their own particles.
//! The parts (PartArrays) are GPUs driven by this process (multi_gpu.h) or host memory in the
//! tests; the transport is NCCL (nccl_transport.h) or one of the loopbacks below (host memory, or
//! device memory when every part is on one GPU: NEARFIELD_EMULATE_GPUS, multi_gpu.h).

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "distributed/decomposition.h"

namespace nf {

//! Where one part's sorted bodies and accelerations live, and the work an evaluation asks of it
//! besides the transfers. On a GPU every call only enqueues work (on the device's default stream).
class PartArrays {
 public:
  virtual ~PartArrays() = default;
  virtual std::size_t body_bytes() const = 0;  //!< bytes of one body (Body<T>)
  virtual std::size_t acc_bytes() const = 0;   //!< bytes of one acceleration (Acc4<T>)
  virtual unsigned char* bodies() = 0;         //!< the part's sorted bodies
  virtual unsigned char* acc() = 0;            //!< the part's sorted accelerations
  //! Gathers the bodies owed to the plan's peer k (PeerTransfer::send) into send_buffer(k).
  virtual void pack(std::size_t k) = 0;
  virtual unsigned char* send_buffer(std::size_t k) = 0;
  //! The kernel over the part's own and halo particles.
  virtual void compute() = 0;
  //! Where peer k's counterforces arrive (CrossPairs::once).
  virtual unsigned char* counterforce_buffer(std::size_t k) = 0;
  //! acc[send positions of peer k] += counterforce_buffer(k).
  virtual void add_counterforces(std::size_t k) = 0;
};

//! Point-to-point messages between parts, posted in groups: a receive matches the send of the
//! same pair of parts in the same group (sizes agree by construction of the plan).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void group_start() = 0;
  virtual void send(int part, int peer, const void* data, std::size_t bytes) = 0;
  virtual void recv(int part, int peer, void* data, std::size_t bytes) = 0;
  //! Completes (host) or enqueues (device) every message of the group.
  virtual void group_end() = 0;
};

//! One evaluation over `parts` (indexed like plan.parts; a null entry is a part another process
//! drives, for which nothing is posted here).
void evaluate_parts(const ExchangePlan& plan, const std::vector<PartArrays*>& parts, Transport& t);

//! Host-memory transport: group_end copies each receive from its matching send and refuses a
//! receive without a send of the same size (or a send nobody receives) before it copies anything.
//! For tests, and as the definition of what a transport must do.
class LoopbackTransport : public Transport {
 public:
  void group_start() override;
  void send(int part, int peer, const void* data, std::size_t bytes) override;
  void recv(int part, int peer, void* data, std::size_t bytes) override;
  void group_end() override;
  std::size_t messages() const { return messages_; }  //!< messages delivered so far
  std::size_t bytes() const { return bytes_; }        //!< bytes delivered so far

 protected:
  //! Moves one message (memcpy here).
  virtual void copy(void* dst, const void* src, std::size_t bytes);

 private:
  std::map<std::pair<int, int>, std::pair<const void*, std::size_t>> sends_;  // (from, to)
  std::map<std::pair<int, int>, std::pair<void*, std::size_t>> recvs_;        // (from, to)
  bool open_ = false;
  std::size_t messages_ = 0, bytes_ = 0;
};

//! The loopback between parts that all live on the current CUDA device (emulated GPUs,
//! NEARFIELD_EMULATE_GPUS in multi_gpu.h): each message is a device-to-device copy enqueued on the
//! default stream (gpu::copy_on_device), so it follows the packing before it and precedes the
//! kernels after it, like NCCL's group chained to the default streams. Same matching and refusals
//! as LoopbackTransport; in a build without CUDA a delivery throws UsageError.
class DeviceLoopbackTransport final : public LoopbackTransport {
 protected:
  void copy(void* dst, const void* src, std::size_t bytes) override;
};

}  // namespace nf
