#include "matrix/diagnostics.h"

#include <catch2/catch.hpp>

namespace sagebuild {
namespace {

TEST_CASE("a diagnostic shows the line and a caret under the location", "[diagnostics]") {
  const std::string source = "a: 1\n  pyton: [3.12]\n";
  const Diagnostic d{"matrix.yaml", {2, 3, 5}, "unknown key 'pyton' (did you mean 'python'?)"};
  CHECK(render(d, source) ==
        "matrix.yaml:2:3: unknown key 'pyton' (did you mean 'python'?)\n"
        " 2 |   pyton: [3.12]\n"
        "   |   ^~~~~\n");
}

TEST_CASE("tabs before the location are kept so the caret lines up", "[diagnostics]") {
  const Diagnostic d{"m.yaml", {1, 2, 1}, "here"};
  CHECK(render(d, "\tx\r\n") == "m.yaml:1:2: here\n 1 | \tx\n   | \t^\n");
}

TEST_CASE("file-level diagnostics and notes", "[diagnostics]") {
  const Diagnostic d{"matrix.yaml", {}, "the file is empty", "add a package section"};
  CHECK(render(d, "") == "matrix.yaml: the file is empty\n  note: add a package section\n");
  const Diagnostic past_end{"m.yaml", {7, 1, 1}, "x"};
  CHECK(render(past_end, "one line\n") == "m.yaml:7:1: x\n");
}

}  // namespace
}  // namespace sagebuild
