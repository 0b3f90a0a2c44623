#include "wheel/filename.h"

#include <catch2/catch.hpp>

namespace sagebuild::wheel {
namespace {

TEST_CASE("our wheel names parse", "[filename]") {
  auto w = parse_wheel_filename("sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl");
  REQUIRE(w);
  CHECK(w->canonical_name == "sageattention");
  CHECK(w->version.normalized == "2.2.0");
  REQUIRE(w->build);
  CHECK(w->build->text == "280.129");
  CHECK(w->build->number == "280");
  CHECK(w->build->suffix == ".129");
  REQUIRE(w->tags.size() == 1);
  CHECK(w->tags[0].str() == "cp312-cp312-linux_x86_64");
}

TEST_CASE("compressed tag sets expand, lower-cased and sorted", "[filename]") {
  auto w = parse_wheel_filename("Foo_Bar-1.0-py3.py2-NONE-any.whl");
  REQUIRE(w);
  CHECK(w->canonical_name == "foo-bar");
  REQUIRE(w->tags.size() == 2);
  CHECK(w->tags[0].str() == "py2-none-any");
  CHECK(w->tags[1].str() == "py3-none-any");
}

TEST_CASE("invalid names say why", "[filename]") {
  CHECK(parse_wheel_filename("foo-1.0-py3-none-any.zip").error().message ==
        "invalid wheel filename (extension must be '.whl'): 'foo-1.0-py3-none-any.zip'");
  CHECK(
      parse_wheel_filename("foo-py3-none-any.whl").error().message.find("wrong number of parts") !=
      std::string::npos);
  CHECK(
      parse_wheel_filename("foo__bar-1.0-py3-none-any.whl").error().message.find("project name") !=
      std::string::npos);
  CHECK(parse_wheel_filename("foo-1.0-abc-py3-none-any.whl").error().message ==
        "invalid build number: abc in 'foo-1.0-abc-py3-none-any.whl'");
  CHECK_FALSE(parse_wheel_filename("foo-1..0-py3-none-any.whl"));
  CHECK_FALSE(parse_wheel_filename("foo-1.0-3py-none-any.whl"));  // interpreter not an identifier
  CHECK_FALSE(parse_wheel_filename("foo-1.0-py3..x-none-any.whl"));       // empty tag component
  CHECK_FALSE(parse_wheel_filename("caf\xc3\xa9-1.0-py3-none-any.whl"));  // deliberate: ASCII only
}

TEST_CASE("PEP 440 normalisation matches packaging", "[pep440]") {
  const std::pair<const char*, const char*> cases[] = {
      {"1.0", "1.0"},         {"v1.0", "1.0"},        {"01.02", "1.2"},
      {"1.0alpha2", "1.0a2"}, {"1.0-1", "1.0.post1"}, {"1.0_post_3", "1.0.post3"},
      {"1.0c1", "1.0rc1"},    {"1.0pre", "1.0rc0"},   {"1.0.dev", "1.0.dev0"},
      {"0!1.0", "1.0"},       {"2!1.0", "2!1.0"},     {"1.0+LoCaL.01", "1.0+local.1"},
      {" 1.0 ", "1.0"},       {"1.0r2", "1.0.post2"}, {"1.0RC1", "1.0rc1"},
  };
  for (const auto& [input, normalized] : cases) {
    INFO(input);
    auto v = parse_pep440(input);
    REQUIRE(v);
    CHECK(v->normalized == normalized);
  }
  for (const char* bad : {"", "abc", "1..0", "1.0.", "1.0+", "1.0+a..b", "\xd9\xa1.0"}) {
    INFO(bad);
    CHECK_FALSE(parse_pep440(bad));
  }
}

}  // namespace
}  // namespace sagebuild::wheel
