// libFuzzer target: the Tipsy reader (io/tipsy.h, docs/design.md §13) on any bytes, both byte
// orders and header sizes. A refusal is an InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "core/errors.h"
#include "io/tipsy.h"
#include "memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nf::fuzz::MemoryFile file(data, size);
  try {
    nf::io::TipsyInfo info;
    nf::io::read_tipsy(file.path(), &info);
  } catch (const nf::InputError&) {
  }
  return 0;
}
