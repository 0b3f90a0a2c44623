#include "github/output.h"

#include <catch2/catch.hpp>

namespace sagebuild::github {
namespace {

TEST_CASE("one-line values use name=value", "[github]") {
  CHECK(*format_output("matrix", R"({"include":[]})") == "matrix={\"include\":[]}\n");
}

TEST_CASE("multi-line values use a random heredoc delimiter and read back", "[github]") {
  auto text = format_output("notes", "line 1\nline 2");
  REQUIRE(text);
  CHECK(text->starts_with("notes<<ghadelimiter_"));
  auto parsed = parse_output_file("a=1\n" + *text + "b=x=y\n");
  REQUIRE(parsed);
  CHECK(parsed->at("notes") == "line 1\nline 2");
  CHECK(parsed->at("a") == "1");
  CHECK(parsed->at("b") == "x=y");
}

TEST_CASE("invalid names and unterminated heredocs are errors", "[github]") {
  CHECK_FALSE(format_output("bad=name", "x"));
  CHECK_FALSE(format_output("", "x"));
  CHECK_FALSE(format_output(std::string_view("a\0b", 3), "x"));  // found by fuzz_github_output
  CHECK_FALSE(format_output("1st", "x"));
  CHECK(format_output("wheel-names_2", "x"));
  // GitHub's runner reads a carriage return as a line break: refused, never written changed.
  CHECK_FALSE(format_output("notes", "line\r"));
  CHECK_FALSE(format_output("notes", "a\r\nb"));
  CHECK_FALSE(parse_output_file("x<<EOF\nno end\n"));
  CHECK_FALSE(parse_output_file("just text\n"));
}

}  // namespace
}  // namespace sagebuild::github
