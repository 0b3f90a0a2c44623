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

TEST_CASE("credentials are masked in every spelling a server can echo", "[secrets]") {
  const auto forms = credential_forms("alice", "p@ss w0rd");
  // "alice:p@ss w0rd" in base64, as an Authorization: Basic header carries it.
  const std::string echoed =
      "Authorization: Basic YWxpY2U6cEBzcyB3MHJk\nurl http://alice:p%40ss%20w0rd@host/ pw p@ss "
      "w0rd";
  const std::string clean = redact(echoed, forms);
  CHECK(clean.find("YWxpY2U6cEBzcyB3MHJk") == std::string::npos);
  CHECK(clean.find("p%40ss%20w0rd") == std::string::npos);
  CHECK(clean.find("p@ss w0rd") == std::string::npos);
  CHECK(clean.find("alice") == std::string::npos);
  CHECK(url_credentials("https://alice:p%40ss@host/x@y") ==
        std::pair<std::string, std::string>{"alice", "p@ss"});
  CHECK(url_credentials("https://t0ken@host/") == std::pair<std::string, std::string>{"", "t0ken"});
  CHECK(url_credentials("https://host/a@b").first.empty());
}

}  // namespace
}  // namespace sagebuild
