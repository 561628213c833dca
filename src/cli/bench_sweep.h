#pragma once
//! What `bench` and `bench --tree` share (docs/design.md §6-§7): the columns of bench's results
//! files, and the tree-build sweep that `bench --tree` runs instead of kernels.

#include <ostream>
#include <string>
#include <vector>

#include "cli/sweep.h"

namespace nf::cli {

//! The columns of bench's results files (kernel rows and tree-build rows), the context last.
const std::vector<std::string>& bench_columns();

//! `bench --tree`: times the GPU tree build of every point, stage by stage, against a bare CUB
//! sort and the CPU build; prints a table and appends rows to c.output (cli/tree_bench.cc).
int bench_tree(const SweepConfig& c, std::ostream& out, std::ostream& err);

}  // namespace nf::cli
