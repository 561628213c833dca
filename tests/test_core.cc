// core/: exact conversion between decimal text and doubles (core/numbers.h), why a number
// did not parse, in the words of the error messages, why there is no GPU (core/gpu_runtime.h), and
// the checked environment variables (core/env.h).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/numbers.h"
#include "helpers.h"

using namespace nf;
using nf::test::bits_of;

TEST_CASE("decimal text converts to the nearest double, and doubles round-trip") {
  double v = 0;
  REQUIRE(parse_double("0.1", v));
  CHECK(bits_of(v) == bits_of(0.1));
  REQUIRE(parse_double("0.0625", v));
  CHECK(v == 0.0625);
  // 17 significant digits written by other tools (numpy repr, printf %.17g).
  REQUIRE(parse_double("0.30744451823034274", v));
  CHECK(bits_of(v) == bits_of(0.30744451823034274));
  REQUIRE(parse_double("1.0000000000000002", v));
  CHECK(v == 1.0 + std::numeric_limits<double>::epsilon());
  REQUIRE(parse_double("2.2250738585072014e-308", v));
  CHECK(v == std::numeric_limits<double>::min());
  REQUIRE(parse_double("4.9406564584124654e-324", v));
  CHECK(v == std::numeric_limits<double>::denorm_min());
  REQUIRE(parse_double(" +1e3 ", v));
  CHECK(v == 1000.0);
  // A value exactly halfway between two doubles rounds to even (digit-by-digit parsers miss it).
  REQUIRE(parse_double("9007199254740993", v));
  CHECK(v == 9007199254740992.0);
  CHECK_FALSE(parse_double("", v));
  CHECK_FALSE(parse_double("1.5x", v));
  CHECK_FALSE(parse_double("abc", v));
  CHECK_FALSE(parse_double("1e999", v));
  // Underflow to zero is out of range too (boost's lexical_cast, behind the command-line options,
  // reads it as 0: cli/commands.cc checks them); zeros written any way are zeros, and the smallest
  // subnormal's neighbourhood still parses.
  CHECK_FALSE(parse_double("1e-400", v));
  CHECK_FALSE(parse_double("-2.5e-330", v));
  REQUIRE(parse_double("0.000e-400", v));
  CHECK(v == 0.0);
  REQUIRE(parse_double("-0e5", v));
  CHECK(v == 0.0);
  REQUIRE(parse_double("3e-324", v));
  CHECK(v == std::numeric_limits<double>::denorm_min());
  // Why a number did not parse, in the words of the error messages.
  CHECK(parse_failure("1e999", false) == "is out of range");
  CHECK(parse_failure("-1e999", false) == "is out of range");
  CHECK(parse_failure("1e-400", false) == "is out of range");
  CHECK(parse_failure("1.5x", false) == "is not a number");
  CHECK(parse_failure(" ", false) == "is empty");
  CHECK(parse_failure("99999999999999999999", true) == "is out of range");
  CHECK(parse_failure("4.5", true) == "is not an integer");

  nf::Random r(11);
  for (int k = 0; k < 20000; ++k) {
    std::uint64_t b = (static_cast<std::uint64_t>(r.below(1ull << 32)) << 32) | r.below(1ull << 32);
    double d;
    std::memcpy(&d, &b, sizeof d);
    if (!std::isfinite(d)) continue;
    double back = 0;
    REQUIRE(parse_double(format_double(d), back));
    CHECK(bits_of(back) == bits_of(d));
  }
}

TEST_CASE("a missing GPU is named as such, not as a driver to upgrade") {
  const std::string detail = "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version";
  const bool driver = std::filesystem::exists("/proc/driver/nvidia/version");
  const std::string old_driver = gpu::missing_device_reason(false, true, detail);
  if (driver) {
    CHECK(old_driver.find("older than this build's CUDA runtime needs") != std::string::npos);
  } else {
    CHECK(old_driver.rfind("no CUDA device found (" + detail, 0) == 0);
    CHECK(old_driver.find("no NVIDIA driver on this machine") != std::string::npos);
  }
  CHECK(gpu::missing_device_reason(true, false, "cudaGetDeviceCount: 0 devices").rfind("no CUDA device found (", 0) == 0);
  CHECK(gpu::missing_device_reason(false, false, "cudaGetDeviceCount: unknown error").rfind("no usable CUDA device", 0) == 0);
  // Whatever the machine, the reason says what is missing rather than nothing.
  if (!gpu::available()) CHECK_FALSE(gpu::unavailable_reason().empty());
}

TEST_CASE("environment variables: a value the variable does not take is refused, naming both") {
  test::EnvScope v("NEARFIELD_TEST_VARIABLE", nullptr);
  CHECK(env::value("NEARFIELD_TEST_VARIABLE").empty());
  CHECK(env::choice("NEARFIELD_TEST_VARIABLE", {"on", "off"}).empty());
  CHECK(env::integer("NEARFIELD_TEST_VARIABLE", 1, 8, 5) == 5);
  v.set("");  // empty counts as unset
  CHECK(env::integer("NEARFIELD_TEST_VARIABLE", 1, 8, 5) == 5);
  v.set("off");
  CHECK(env::choice("NEARFIELD_TEST_VARIABLE", {"on", "off"}) == "off");
  v.set("Off");
  CHECK_THROWS_WITH_AS(env::choice("NEARFIELD_TEST_VARIABLE", {"on", "off", "high"}),
                       "NEARFIELD_TEST_VARIABLE=Off: expected on, off or high", UsageError);
  for (const char* good : {"1", "8", "007"}) {
    v.set(good);
    CHECK(env::integer("NEARFIELD_TEST_VARIABLE", 1, 8, 5) == std::stoll(good));
  }
  // atoi would have taken every one of these (as 0, 9, 2, 3, 1, -2 or 2).
  for (const char* bad : {"abc", "9", "2x", " 3", "+1", "-2", "0", "1.5", "99999999999999999999"}) {
    CAPTURE(bad);
    v.set(bad);
    const std::string message = std::string("NEARFIELD_TEST_VARIABLE=") + bad + ": expected a whole number from 1 to 8";
    CHECK_THROWS_WITH_AS(env::integer("NEARFIELD_TEST_VARIABLE", 1, 8, 5), message.c_str(), UsageError);
  }
  v.set("-2");
  CHECK(env::integer("NEARFIELD_TEST_VARIABLE", -4, 4, 0) == -2);
  v.set("-0");
  CHECK(env::integer("NEARFIELD_TEST_VARIABLE", 0, 4, 1) == 0);
  // Leading zeros do not count towards the 18 digits; 19 digits (which might overflow) are refused.
  v.set("0000000000000000000000123");
  CHECK(env::integer("NEARFIELD_TEST_VARIABLE", 1, 1000, 5) == 123);
  const long long most = 999999999999999999LL;  // 18 digits
  v.set("999999999999999999");
  CHECK(env::integer("NEARFIELD_TEST_VARIABLE", 1, most, 5) == most);
  v.set("9999999999999999999");
  CHECK_THROWS_AS(env::integer("NEARFIELD_TEST_VARIABLE", 1, most, 5), UsageError);
  v.set("-");
  CHECK_THROWS_AS(env::integer("NEARFIELD_TEST_VARIABLE", -4, 4, 0), UsageError);
  // Lists of counts (NEARFIELD_SMALL_BOX): each a whole number, no sign, nothing else.
  v.set(nullptr);
  CHECK(env::counts("NEARFIELD_TEST_VARIABLE").empty());
  v.set("8,2048,03");
  CHECK(env::counts("NEARFIELD_TEST_VARIABLE") == std::vector<unsigned long long>{8, 2048, 3});
  v.set("7");
  CHECK(env::counts("NEARFIELD_TEST_VARIABLE") == std::vector<unsigned long long>{7});
  for (const char* bad : {"8,16x", " 8,16", "8, 16", "8,16,3.5", "8,,16", "8,16,", ",8", "8,-1", "+8,16"}) {
    CAPTURE(bad);
    v.set(bad);
    const std::string message = std::string("NEARFIELD_TEST_VARIABLE=") + bad + ": expected whole numbers separated by commas";
    CHECK_THROWS_WITH_AS(env::counts("NEARFIELD_TEST_VARIABLE"), message.c_str(), UsageError);
  }
}
