#include "matrix/package_version.h"

#include <catch2/catch.hpp>

#include "test_support.h"

namespace sagebuild::matrix {
namespace {

const VersionSource kPyproject{.file = "pyproject.toml",
                               .regex = R"re(^version\s*=\s*"([^"]+)")re"};

TEST_CASE("the version comes from its one source", "[package_version]") {
  auto v = extract_version("[project]\nname = \"x\"\nversion = \"2.2.0\"\n", kPyproject);
  REQUIRE(v);
  CHECK(*v == "2.2.0");
  auto repo = read_package_version(testing::source_dir(),
                                   {.file = "python/pyproject.toml", .regex = kPyproject.regex});
  REQUIRE(repo);
  CHECK(*repo == "2.2.0");
}

TEST_CASE("a missing or invalid version is a clear error", "[package_version]") {
  auto none = extract_version("[project]\nname = \"x\"\n", kPyproject);
  REQUIRE_FALSE(none);
  CHECK(none.error().message.starts_with("no version found in 'pyproject.toml'"));
  auto local = extract_version("version = \"2.2.0+cu129\"\n", kPyproject);
  REQUIRE_FALSE(local);
  CHECK(local.error().message ==
        "'2.2.0+cu129' in 'pyproject.toml' is not a PEP 440 public version (like 2.2.0)");
  auto missing = read_package_version("/nonexistent", kPyproject);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.starts_with("cannot read the package version: cannot open"));
}

TEST_CASE("PEP 440 public versions", "[package_version]") {
  for (const char* good : {"2.2.0", "2.2", "1!2.0", "2.2.0rc1", "2.2.0.post1", "2.2.0.dev3",
                           "2.2.0a1.dev2", "2.2.0-1"}) {
    INFO(good);
    CHECK(is_pep440_public_version(good));
  }
  for (const char* bad : {"", "2.2.0+local", "two", "2.2.0.final", "2..2"}) {
    INFO(bad);
    CHECK_FALSE(is_pep440_public_version(bad));
  }
}

}  // namespace
}  // namespace sagebuild::matrix
