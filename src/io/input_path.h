#pragma once
//! The check every input file passes before any work (docs/design.md §6). Its own header, in
//! namespace nf, so that csv_file.cc (where `io::` is the CSV parser's namespace) can use it.

#include <string>

namespace nf {

//! Throws InputError naming `path` unless it is a regular file this process can read: "is a folder,
//! not a file", "is not a regular file" (a device, a FIFO), or "cannot open file: " and the reason
//! (no such file, permission denied).
void check_input_path(const std::string& path);

}  // namespace nf
