// libFuzzer target: the whitespace-table reader (io/table.h, docs/design.md §13) on any text.
// A refusal is an InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/errors.h"
#include "io/table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    nf::io::parse_table("fuzz.tab", std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const nf::InputError&) {
  }
  return 0;
}
