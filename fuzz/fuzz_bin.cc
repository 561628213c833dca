// libFuzzer target: nearfield's .bin particle reader (io/bin_file.h, docs/design.md §13) on any
// bytes. A refusal is an InputError; anything else (a crash, a sanitizer report, another
// exception, an allocation beyond what the file holds) is a finding.
#include <cstddef>
#include <cstdint>

#include "core/errors.h"
#include "io/bin_file.h"
#include "memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nf::fuzz::MemoryFile file(data, size);
  try {
    nf::io::read_bin(file.path());
  } catch (const nf::InputError&) {
  }
  return 0;
}
