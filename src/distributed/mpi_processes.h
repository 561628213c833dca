#pragma once
//! The process group of a run under MPI (process_group.h) over MPI_COMM_WORLD. Built only when
//! CMake finds MPI (library nf_mpi: nearfield-mpi and test_mpi).

#include <memory>

#include "distributed/process_group.h"

namespace nf {

//! MPI_COMM_WORLD as a ProcessGroup (MPI must be initialized).
std::shared_ptr<ProcessGroup> mpi_process_group();

}  // namespace nf
