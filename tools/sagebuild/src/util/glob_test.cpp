#include "util/glob.h"

#include <catch2/catch.hpp>

namespace sagebuild::glob {
namespace {

TEST_CASE("glob patterns on version strings", "[glob]") {
  CHECK(matches("2.8.*", "2.8.0"));
  CHECK_FALSE(matches("2.8.*", "2.9.0"));
  CHECK(matches("3.1?", "3.10"));
  CHECK_FALSE(matches("3.1?", "3.9"));
  CHECK(matches("*", ""));
  CHECK(matches("3.1[0-2]", "3.12"));
  CHECK_FALSE(matches("3.1[0-2]", "3.13"));
  CHECK(matches("3.1[!0-2]", "3.13"));
  CHECK(matches("*.*.0", "2.11.0"));
  CHECK(matches("2.[", "2.["));  // an unterminated class is a literal '['
  CHECK_FALSE(matches("2.8", "2.8.0"));
  CHECK(matches("a*b*c", "aXXbYYc"));
  CHECK_FALSE(matches("a*b*c", "aXXbYY"));
}

TEST_CASE("matching stays fast on pathological patterns", "[glob]") {
  const std::string text(2000, 'a');
  CHECK_FALSE(matches("*a*a*a*a*a*a*a*a*b", text));
}

}  // namespace
}  // namespace sagebuild::glob
