#pragma once
//! How much host memory a run may still take (docs/design.md §6, "Check before work").

#include <cstdint>
#include <string>

namespace nf {

//! Bytes of host memory this process can still allocate without swapping or being killed: the
//! kernel's MemAvailable (/proc/meminfo; free memory plus what the page cache can give back),
//! lowered to what a control group's limit leaves (cgroup v2 memory.max less memory.current, or
//! v1 limit_in_bytes less usage_in_bytes) where one applies. Without /proc: sysconf's available
//! pages. `source` (if given) receives a short phrase saying which figure was used.
std::uint64_t available_host_memory(std::string* source = nullptr);

//! Processes of one run that share this host (nearfield-mpi sets its ranks on the host; 1 by
//! default): available_host_memory then gives each its share, since every rank checks its own
//! need alone (R ranks that each fit had together been killed for memory).
void set_host_memory_sharers(int processes);

//! "23.2 GiB", "512 MiB" or "4096 bytes": byte counts in messages (3 significant digits).
std::string byte_text(double bytes);

}  // namespace nf
