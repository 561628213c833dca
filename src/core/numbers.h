#pragma once
//! Exact text <-> number conversion. Every decimal written by another tool is read to the nearest
//! double (std::from_chars is correctly rounded), and doubles are written in the shortest form that
//! reads back to the same bits, so files round-trip exactly.

#include <cstdint>
#include <string>
#include <string_view>

namespace nf {

//! Parses the whole of `text` (surrounding blanks allowed, a leading '+' accepted) as a double.
//! Returns false on empty or non-numeric text; "nan" and "inf" parse (callers reject them).
bool parse_double(std::string_view text, double& out);
//! Same for a signed 64-bit integer.
bool parse_int64(std::string_view text, std::int64_t& out);
//! Why `text` did not parse: "is empty", "is out of range" (1e999, 2^63) or "is not a number"
//! ("is not an integer" when `integer`), for messages of the form "'1e999' is out of range".
std::string parse_failure(std::string_view text, bool integer);
//! Shortest round-trip decimal form of v.
std::string format_double(double v);
//! v in a printf `format` with one double conversion ("%.2e", "%.3g s"): text for people, not files.
std::string format_number(const char* format, double v);
//! The distance between neighbouring float32 values at magnitude v > 0 (2^(exponent - 23)).
double float32_spacing(double v);
//! Appends format_double(v) to out without a temporary string.
void append_double(std::string& out, double v);
//! `text` without its leading and trailing blanks (spaces, tabs, '\r').
std::string trim(const std::string& text);

}  // namespace nf
