#include "util/version.h"

#include <catch2/catch.hpp>

namespace sagebuild {
namespace {

TEST_CASE("versions compare numerically, missing parts as zero", "[version]") {
  CHECK(*Version::parse("3.10") > *Version::parse("3.9"));
  CHECK(*Version::parse("2.11.0") > *Version::parse("2.9.1"));
  CHECK(*Version::parse("12.8") == *Version::parse("12.8.0"));
  CHECK(Version::parse("12.9.1")->patch() == 1);
}

TEST_CASE("malformed versions are refused", "[version]") {
  for (const char* bad : {"", "3.", ".3", "3..1", "3.1O", "03.1", "1.2.3.4.5", "v1", "-1"}) {
    INFO(bad);
    CHECK_FALSE(Version::parse(bad));
  }
}

TEST_CASE("constraints", "[version]") {
  const auto c = *VersionConstraint::parse(">=9.0, <13.0");
  CHECK(c.allows(*Version::parse("12.9")));
  CHECK_FALSE(c.allows(*Version::parse("13.0")));
  CHECK_FALSE(c.allows(*Version::parse("8.0")));
  CHECK(VersionConstraint::parse("==12.8")->allows(*Version::parse("12.8.0")));
  CHECK(VersionConstraint::parse("!=12.8")->allows(*Version::parse("12.9")));
  CHECK(VersionConstraint::parse(">12.8")->allows(*Version::parse("12.8.1")));
  CHECK(VersionConstraint::parse("<=12.8")->allows(*Version::parse("12.8")));
  CHECK_FALSE(VersionConstraint::parse("~=12.8"));
  CHECK_FALSE(VersionConstraint::parse(">=abc"));
}

}  // namespace
}  // namespace sagebuild
