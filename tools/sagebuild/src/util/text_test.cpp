#include "util/text.h"

#include <catch2/catch.hpp>

namespace sagebuild::text {
namespace {

TEST_CASE("edit distance counts transpositions as one edit", "[text]") {
  CHECK(edit_distance("pyton", "python") == 1);
  CHECK(edit_distance("stabel", "stable") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("same", "same") == 0);
}

TEST_CASE("suggestions only for likely typos", "[text]") {
  const std::vector<std::string> keys = {"python", "torch", "cuda", "platform"};
  CHECK(did_you_mean("pyton", keys) == " (did you mean 'python'?)");
  CHECK(did_you_mean("tourch", keys) == " (did you mean 'torch'?)");
  CHECK(did_you_mean("zzz", keys).empty());
  CHECK(did_you_mean("python", keys).empty());  // an exact match is not a typo
}

TEST_CASE("UTF-8 is checked as Python's strict codec does", "[text]") {
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  CHECK_FALSE(is_valid_utf8("\xff"));
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xe2\x82"));          // truncated
}

TEST_CASE("split, join, trim", "[text]") {
  CHECK(split("a;b;;c", ';') == std::vector<std::string>{"a", "b", "", "c"});
  const std::vector<std::string> parts = {"a", "b"};
  CHECK(join(parts, ", ") == "a, b");
  CHECK(trim("  x \t\n") == "x");
}

}  // namespace
}  // namespace sagebuild::text

namespace sagebuild::text {
namespace {

TEST_CASE("the last lines of a log, indented", "[text]") {
  CHECK(last_lines("a\nb\nc\nd\n\n", 2) == "  c\n  d");
  CHECK(last_lines("one\r\n", 5, "> ") == "> one");
  CHECK(last_lines(" \n", 3).empty());
}

TEST_CASE("placeholders are filled once, unknown ones kept", "[text]") {
  const std::vector<std::pair<std::string, std::string>> values = {{"python", "/usr/bin/python3"},
                                                                   {"dir", "{python}"}};
  CHECK(fill_placeholders("{python} -m pip -w {dir}", values) ==
        "/usr/bin/python3 -m pip -w {python}");
  CHECK(fill_placeholders("{unknown} and {python", values) == "{unknown} and {python");
  CHECK(fill_placeholders("", values).empty());
}

TEST_CASE("shell_single_quoted: any text reads back from a POSIX shell", "[text]") {
  CHECK(shell_single_quoted("a b") == "'a b'");
  CHECK(shell_single_quoted("it's") == "'it'\\''s'");
  CHECK(shell_single_quoted("") == "''");
}

TEST_CASE("printable: control characters and non-ASCII bytes escaped", "[text]") {
  CHECK(printable("plain name-1") == "plain name-1");
  CHECK(printable(std::string_view("a\0b\r\n\xff", 6)) == "a\\x00b\\x0d\\x0a\\xff");
}

}  // namespace
}  // namespace sagebuild::text
