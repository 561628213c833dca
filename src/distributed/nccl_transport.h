#pragma once
//! NCCL as the transport of multi-GPU evaluations (exchange.h). libnccl is large (about 218 MB)
//! and not needed by anything else, so it is never linked: it is loaded with dlopen the first time
//! a run asks for more than one GPU. Where it looks, in order:
//!  1. NEARFIELD_NCCL_LIB: the library file, or a folder holding libnccl.so.2 (only there when set);
//!  2. the dynamic loader's own search (LD_LIBRARY_PATH, the ld.so cache);
//!  3. the CUDA installation: /usr/local/cuda/lib64, /usr/local/cuda/lib, /usr/local/cuda-*/lib*,
//!     /usr/local/cuda*/targets/*/lib; then /usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/local/lib;
//!  4. the Python package nvidia-nccl-cu13 / -cu12 (nvidia/nccl/lib in the usual site-packages
//!     folders, then wherever `python3 -c "import nvidia.nccl"` finds it).
//! NVLink multicast (NVLS) is switched off before any communicator exists (NCCL_NVLS_ENABLE=0):
//! send/recv never needs it, and on shared machines it must stay off.

#include <memory>
#include <string>
#include <vector>

#include "distributed/exchange.h"

namespace nf {

//! True when this build knows NCCL's interface (CMake found nccl.h beside the CUDA toolkit).
bool nccl_compiled();

//! Loads libnccl (once per process) and returns "PATH (NCCL x.y.z)". UsageError when this build
//! has no NCCL support, or naming every place it looked when the library cannot be loaded.
std::string load_nccl();

//! The places load_nccl tries after NEARFIELD_NCCL_LIB and the loader's own search (existing
//! files only, in order).
std::vector<std::string> nccl_library_candidates();

//! Point-to-point messages between parts over NCCL. Each local part has its device, its
//! communicator and one stream for NCCL; a group is chained to the devices' default streams
//! (where the kernels run) with events both ways, so transfers start after the kernels before
//! them and kernels after them wait for the data.
class NcclTransport final : public Transport {
 public:
  //! Parts 0..gpus-1 of this process on devices 0..gpus-1 (ncclCommInitAll). Communicators are
  //! made once per process and size and kept until it exits (making them takes about a second).
  static std::shared_ptr<NcclTransport> for_devices(int gpus);
  //! One process per GPU (MPI): this process's part `rank` of `ranks`, on `device`; `unique_id`
  //! holds the bytes of the ncclUniqueId that rank 0 made (nccl_unique_id) and sent to all.
  NcclTransport(int rank, int ranks, int device, const std::string& unique_id);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  void group_start() override;
  void send(int part, int peer, const void* data, std::size_t bytes) override;
  void recv(int part, int peer, void* data, std::size_t bytes) override;
  void group_end() override;

 private:
  NcclTransport() = default;
  struct Local;
  Local& local(int part);
  std::vector<std::unique_ptr<Local>> local_;
};

//! A fresh ncclUniqueId as bytes (rank 0 of a multi-process run makes it and broadcasts it).
std::string nccl_unique_id();

}  // namespace nf
