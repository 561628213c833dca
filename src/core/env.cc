// The checked environment variables (core/env.h).
#include "core/env.h"

#include <algorithm>
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

namespace {

// `v` as a whole number: digits only, after a minus sign where `sign` allows one (strtoll alone
// would take " 12", "+12" and "12abc"); leading zeros are dropped before the length check (18
// digits cannot overflow). False for any other text.
bool whole_number(const std::string& v, bool sign, long long& n) {
  const bool negative = sign && !v.empty() && v[0] == '-';
  const std::size_t digits = negative ? 1 : 0;
  if (digits == v.size() || v.find_first_not_of("0123456789", digits) != std::string::npos) return false;
  const std::size_t first = std::min(v.find_first_not_of('0', digits), v.size() - 1);
  if (v.size() - first > 18) return false;
  n = (negative ? -1 : 1) * std::strtoll(v.c_str() + first, nullptr, 10);
  return true;
}

}  // namespace

long long integer(const char* name, long long lo, long long hi, long long otherwise) {
  const std::string v = value(name);
  if (v.empty()) return otherwise;
  long long n = 0;
  if (!whole_number(v, true, n) || n < lo || n > hi)
    throw UsageError(std::string(name) + "=" + v + ": expected a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi));
  return n;
}

std::vector<unsigned long long> counts(const char* name) {
  const std::string v = value(name);
  std::vector<unsigned long long> out;
  for (std::size_t at = 0; !v.empty();) {
    const std::size_t comma = v.find(',', at);
    long long n = 0;
    if (!whole_number(v.substr(at, comma == std::string::npos ? std::string::npos : comma - at), false, n))
      throw UsageError(std::string(name) + "=" + v + ": expected whole numbers separated by commas");
    out.push_back(static_cast<unsigned long long>(n));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

}  // namespace nf::env
