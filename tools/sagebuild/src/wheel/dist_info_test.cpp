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

TEST_CASE("headers stop at the body; only free text folds", "[headers]") {
  auto h = Headers::parse(
      "Metadata-Version: 2.1\nName: sageattention\nRequires-Dist: torch==2.8.*\n"
      "Requires-Dist: numpy\nDescription: a long\n  text\n\nName: in the body\n");
  REQUIRE(h);
  CHECK(h->first("name") == "sageattention");
  CHECK(h->all("Requires-Dist") == std::vector<std::string>{"torch==2.8.*", "numpy"});
  CHECK(h->first("Description") == "a long\n  text");
  CHECK(h->count("Name") == 1);
  CHECK_FALSE(Headers::parse("no colon here\n"));
  CHECK_FALSE(Headers::parse(" starts with a continuation\n"));
}

// Each input here is one that Python's email parser (as pip reads METADATA) reads differently
// from a plain "Key: value" reader: the parser must refuse it, not pick one reading.
TEST_CASE("headers Python's email parser reads differently are refused", "[headers]") {
  const std::string pin = "Requires-Dist: torch==2.8.*\n";
  CHECK(Headers::parse("Name: x\r\n" + pin));  // CRLF lines are fine
  for (const std::string& bad : std::vector<std::string>{
           "X-Note : hi\n" + pin,                         // space before the colon
           "Caf\xc3\xa9: x\n" + pin,                      // a non-ASCII name
           "Summary: a\rRequires-Dist: torch<2\n" + pin,  // a lone CR starts a line for Python
           std::string("Requires-Dist: numpy\n torch==2.8.*\n"),  // a folded requirement
           "Name: x\nFrom somebody\n" + pin,                      // mbox's From line
           ": empty name\n" + pin,                                // Python takes '' as a name
           "Name: \xff\xfe\n" + pin,                              // not UTF-8
       }) {
    INFO(bad);
    CHECK_FALSE(Headers::parse(bad));
  }
}

}  // namespace
}  // namespace sagebuild::wheel
