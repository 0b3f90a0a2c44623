#include "util/bounded_regex.h"

#include <catch2/catch.hpp>

namespace sagebuild {
namespace {

TEST_CASE("a version regex finds its group", "[regex]") {
  auto re = BoundedRegex::compile(R"re(^version\s*=\s*"([^"]+)")re");
  REQUIRE(re);
  CHECK(re->capture_groups() == 1);
  CHECK(*re->first_group("version = \"2.2.0\"") == std::optional<std::string>("2.2.0"));
  CHECK(*re->first_group("name = \"x\"") == std::nullopt);
  CHECK_FALSE(BoundedRegex::compile("(unclosed"));
}

TEST_CASE("a catastrophic pattern stops at its budget with an error", "[regex]") {
  auto re = BoundedRegex::compile("^(x+x+)+y()");
  REQUIRE(re);
  // The 'y' it requires is there, after a 'z' that makes every way of splitting the x's fail.
  const auto found = re->first_group(std::string(40, 'x') + "zy");
  REQUIRE_FALSE(found);
  CHECK(found.error().message.find("steps") != std::string::npos);
}

}  // namespace
}  // namespace sagebuild
