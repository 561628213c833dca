#pragma once
//! Error types. Input errors name the file, the line and the problem; main() prints what() and
//! exits non-zero.

#include <stdexcept>
#include <string>

namespace nf {

//! Bad input data (a CSV file, a domain, a generator parameter).
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
  //! "file:line: problem" (line 0 leaves the line out).
  InputError(const std::string& file, long line, const std::string& problem)
      : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + problem) {}
};

//! A request the program refuses: unknown kernel, level too deep, GPU kernel without a GPU, ...
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace nf
