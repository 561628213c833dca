#include "core/numbers.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace nf {
namespace {
std::string_view trim(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t' || t.front() == '\r')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
  return t;
}
// The part of a field that from_chars reads: blanks trimmed, a leading '+' dropped.
std::string_view number_text(std::string_view t) {
  t = trim(t);
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  return t;
}
}  // namespace

bool parse_double(std::string_view text, double& out) {
  text = number_text(text);
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out, std::chars_format::general);
  // Out-of-range values (1e999) are errors too: from_chars reports them and leaves `out` alone.
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool parse_int64(std::string_view text, std::int64_t& out) {
  text = number_text(text);
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string parse_failure(std::string_view text, bool integer) {
  text = number_text(text);
  if (text.empty()) return "is empty";
  const char* end = text.data() + text.size();
  std::from_chars_result r;
  if (integer) {
    std::int64_t v;
    r = std::from_chars(text.data(), end, v);
  } else {
    double v;
    r = std::from_chars(text.data(), end, v, std::chars_format::general);
  }
  // from_chars consumed the whole text as a number that does not fit the type.
  if (r.ec == std::errc::result_out_of_range && r.ptr == end) return "is out of range";
  return integer ? "is not an integer" : "is not a number";
}

void append_double(std::string& out, double v) {
  char buf[32];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, ec == std::errc() ? ptr : buf);
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::string format_double(double v) {
  std::string s;
  append_double(s, v);
  return s;
}

std::string format_number(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

double float32_spacing(double v) { return std::ldexp(1.0, std::ilogb(v) - 23); }

}  // namespace nf
