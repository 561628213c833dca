#pragma once
//! The NEARFIELD_* environment variables that tune a kernel or pick a variant for comparisons
//! (docs/design.md §9, "Environment variables"). Every one is read through these, so that a value
//! the variable does not take is refused with a UsageError naming the variable and the value,
//! instead of silently running the default under the variant's name.

#include <initializer_list>
#include <string>

namespace nf::env {

//! The variable's value; "" when it is unset or empty.
std::string value(const char* name);

//! value(name) when it is "" or one of `allowed`; otherwise a UsageError
//! "NAME=v: expected a, b or c".
std::string choice(const char* name, std::initializer_list<const char*> allowed);

//! The variable as a whole decimal number in [lo, hi]; `otherwise` when it is unset or empty;
//! otherwise (a sign, a fraction, trailing characters, out of range) a UsageError.
long long integer(const char* name, long long lo, long long hi, long long otherwise);

}  // namespace nf::env
