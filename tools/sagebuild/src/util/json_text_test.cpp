#include "util/json_text.h"

#include <string>

#include <catch2/catch.hpp>

namespace sagebuild {
namespace {

TEST_CASE("members of outside JSON are read by type, never thrown on", "[json]") {
  const auto doc = nlohmann::json::parse(
      R"({"name": "a", "size": 12, "id": -3, "draft": true, "digest": 5, "list": [1]})");
  CHECK(json_get<std::string>(doc, "name") == "a");
  CHECK(json_get<std::uint64_t>(doc, "size") == 12u);
  CHECK(json_get<std::int64_t>(doc, "id") == -3);
  CHECK(json_get<bool>(doc, "draft") == true);
  // Wrong types and missing members: nothing (nlohmann's value() would throw type_error).
  CHECK_FALSE(json_get<std::string>(doc, "digest"));
  CHECK_FALSE(json_get<std::uint64_t>(doc, "id"));
  CHECK_FALSE(json_get<std::string>(doc, "list"));
  CHECK_FALSE(json_get<std::string>(doc, "missing"));
  CHECK_FALSE(json_get<std::string>(nlohmann::json::array({1}), "name"));
  CHECK(json_or<std::string>(doc, "digest", "none") == "none");
}

TEST_CASE("nesting depth is measured outside strings", "[json]") {
  CHECK(json_nesting_depth(R"({"a": [[1], {"b": "[[[[{{{{"}]})") == 3);
  CHECK(json_nesting_depth(R"(["\"[[[["])") == 1);
  CHECK(json_nesting_depth("") == 0);
  std::string deep(100, '[');
  CHECK(parse_json_bounded(deep + std::string(100, ']')).is_discarded());
  CHECK_FALSE(parse_json_bounded("[[1]]").is_discarded());
  CHECK(parse_json_bounded("{not json").is_discarded());
}

}  // namespace
}  // namespace sagebuild
