#include "wheel/dist_info.h"

#include <catch2/catch.hpp>

namespace sagebuild::wheel {
namespace {

TEST_CASE("RECORD is CSV as Python writes it", "[record]") {
  auto rows = parse_record(
      "a/b.py,sha256=abc,12\r\n\"a/with,comma.py\",sha256=def,3\n\"q\"\"uote\",,\n\npkg.dist-info/"
      "RECORD,,\n");
  REQUIRE(rows);
  REQUIRE(rows->size() == 4);
  CHECK((*rows)[0].path == "a/b.py");
  CHECK((*rows)[0].hash == "sha256=abc");
  CHECK((*rows)[0].size == "12");
  CHECK((*rows)[1].path == "a/with,comma.py");
  CHECK((*rows)[2].path == "q\"uote");
  CHECK((*rows)[3].line == 5);
}

TEST_CASE("malformed RECORD rows are errors with their line", "[record]") {
  CHECK(parse_record("a,b\n").error().message ==
        "RECORD line 1 has 2 fields, expected 3 (path,hash,size)");
  CHECK(parse_record("ok,sha256=x,1\n\"open,x,1\n").error().message ==
        "RECORD line 2 has an unterminated quote");
}

TEST_CASE("headers fold continuation lines and stop at the body", "[headers]") {
  auto h = Headers::parse(
      "Metadata-Version: 2.1\nName: sageattention\nRequires-Dist: torch==2.8.*\n"
      "Requires-Dist: numpy\nSummary: a long\n  summary\n\nName: in the body\n");
  REQUIRE(h);
  CHECK(h->first("name") == "sageattention");
  CHECK(h->all("Requires-Dist") == std::vector<std::string>{"torch==2.8.*", "numpy"});
  CHECK(h->first("Summary") == "a long\nsummary");
  CHECK(h->count("Name") == 1);
  CHECK_FALSE(Headers::parse("no colon here\n"));
  CHECK_FALSE(Headers::parse(" starts with a continuation\n"));
}

}  // namespace
}  // namespace sagebuild::wheel
