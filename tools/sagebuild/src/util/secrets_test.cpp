#include "util/secrets.h"

#include <catch2/catch.hpp>

namespace sagebuild {
namespace {

TEST_CASE("credentials in URLs are masked, other URLs kept", "[secrets]") {
  CHECK(redact_url("https://user:s3cret@host.example/simple/") ==
        "https://user:***@host.example/simple/");
  CHECK(redact_url("https://tok3n@host.example/simple/") == "https://***@host.example/simple/");
  CHECK(redact_url("https://host.example/a@b") == "https://host.example/a@b");
  CHECK(redact_url("/srv/wheels") == "/srv/wheels");
  CHECK(redact("a s3cret b", {"s3cret", ""}) == "a *** b");
}

}  // namespace
}  // namespace sagebuild
