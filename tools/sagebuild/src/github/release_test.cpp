#include "github/release.h"

#include <catch2/catch.hpp>

namespace sagebuild::github {
namespace {

TEST_CASE("pagination follows rel=next of the Link header", "[release]") {
  CHECK(
      next_page_url(
          R"(<https://api.example/r?page=2>; rel="next", <https://api.example/r?page=5>; rel="last")") ==
      "https://api.example/r?page=2");
  CHECK(
      next_page_url(
          R"(<https://api.example/r?page=1>; rel="prev", <https://api.example/r?page=1>; rel="first")")
          .empty());
  CHECK(next_page_url("").empty());
}

}  // namespace
}  // namespace sagebuild::github
