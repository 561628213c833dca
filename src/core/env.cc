// The checked environment variables (core/env.h).
#include "core/env.h"

#include <cstdlib>

#include "core/errors.h"

namespace nf::env {

std::string value(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string choice(const char* name, std::initializer_list<const char*> allowed) {
  const std::string v = value(name);
  if (v.empty()) return v;
  std::string expected;
  std::size_t i = 0;
  for (const char* a : allowed) {
    if (v == a) return v;
    expected += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + std::string(a);
    ++i;
  }
  throw UsageError(std::string(name) + "=" + v + ": expected " + expected);
}

long long integer(const char* name, long long lo, long long hi, long long otherwise) {
  const std::string v = value(name);
  if (v.empty()) return otherwise;
  const auto refuse = [&] {
    return UsageError(std::string(name) + "=" + v + ": expected a whole number from " + std::to_string(lo) + " to " +
                      std::to_string(hi));
  };
  // Digits only (a leading minus where lo < 0): strtoll alone would take " 12", "+12" and "12abc".
  const std::size_t start = v[0] == '-' && lo < 0 ? 1 : 0;
  if (start == v.size() || v.size() - start > 18 || v.find_first_not_of("0123456789", start) != std::string::npos)
    throw refuse();
  const long long n = std::strtoll(v.c_str(), nullptr, 10);
  if (n < lo || n > hi) throw refuse();
  return n;
}

}  // namespace nf::env
