#pragma once
//! Build identification recorded in every results file.

namespace nf {
//! `git describe --always --dirty` of the source tree at build time ("unknown" outside git).
const char* git_commit();
//! The project version of CMakeLists.txt ("0.1.0").
const char* project_version();
}  // namespace nf
