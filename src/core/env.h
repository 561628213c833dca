#pragma once
//! The NEARFIELD_* environment variables that tune a kernel or pick a variant for comparisons
//! (docs/design.md §9, "Environment variables"). They are read through these (NEARFIELD_M2L_GRADE,
//! two numbers, parses its own, as strictly), so that
//! a value the variable does not take is refused with a UsageError naming the variable and the
//! value, instead of silently running the default under the variant's name.

#include <initializer_list>
#include <string>
#include <vector>

namespace nf::env {

//! The variable's value; "" when it is unset or empty.
std::string value(const char* name);

//! value(name) when it is "" or one of `allowed`; otherwise a UsageError
//! "NAME=v: expected a, b or c".
std::string choice(const char* name, std::initializer_list<const char*> allowed);

//! The variable as a whole decimal number in [lo, hi] (digits, after a minus sign where one is
//! given); `otherwise` when it is unset or empty; otherwise (a plus sign, a space, a fraction,
//! trailing characters, out of range) a UsageError.
long long integer(const char* name, long long lo, long long hi, long long otherwise);

//! The variable as whole decimal numbers separated by commas ("8,2048,3"), each as `integer` takes
//! it (no minus sign); empty when it is unset or empty; a UsageError for any other text.
std::vector<unsigned long long> counts(const char* name);

}  // namespace nf::env
