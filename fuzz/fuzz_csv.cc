// libFuzzer target: the CSV readers (io/csv_file.h, docs/design.md §5 and §13) on any text, read
// as particles, and as accelerations where the text names an `ax` column (each reader allocates
// the CSV parser's fixed 48 MiB buffer, which under ASan costs milliseconds: the accelerations
// reader refuses other text at its header, so it runs only where it can get further).
// A refusal is an InputError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/errors.h"
#include "io/csv_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    nf::parse_particles_csv("fuzz.csv", text);
  } catch (const nf::InputError&) {
  }
  if (text.find("ax") == std::string_view::npos) return 0;
  try {
    nf::parse_accelerations_csv("fuzz.csv", text);
  } catch (const nf::InputError&) {
  }
  return 0;
}
