#include "wheel/compare.h"

#include <catch2/catch.hpp>

#include "util/fs.h"
#include "wheel/zip_writer.h"

namespace sagebuild::wheel {
namespace {

std::vector<std::uint8_t> bytes(std::string_view s) {
  return {s.begin(), s.end()};
}

TEST_CASE("wheels compare byte for byte, and differences are named per entry", "[compare]") {
  fs::TempDir dir("sagebuild-compare");
  const auto a = dir.path() / "a.whl";
  const auto b = dir.path() / "b.whl";
  const std::vector<ZipWriteEntry> base = {{"pkg/lib.so", bytes("binary"), true},
                                           {"pkg/__init__.py", bytes(""), false}};
  REQUIRE(write_zip(a, base, 1700000000));
  REQUIRE(write_zip(b, base, 1700000000));
  auto same = compare_wheels(a, b);
  REQUIRE(same);
  CHECK(same->identical);
  CHECK(same->differences.empty());

  // A build path leaking into a binary, an extra file, a missing one.
  REQUIRE(write_zip(
      b, {{"pkg/lib.so", bytes("binary /tmp/build-2"), true}, {"pkg/extra.py", bytes(""), false}},
      1700000000));
  auto differ = compare_wheels(a, b);
  REQUIRE(differ);
  CHECK_FALSE(differ->identical);
  REQUIRE(differ->differences.size() == 3);
  CHECK(differ->differences[0].entry == "pkg/lib.so");
  CHECK(differ->differences[0].detail == "contents differ (6 vs 19 bytes)");
  CHECK(differ->differences[1].detail == "only in the first");
  CHECK(differ->differences[2].entry == "pkg/extra.py");

  // Only the timestamps differ.
  REQUIRE(write_zip(b, base, 1800000000));
  auto stamped = compare_wheels(a, b);
  REQUIRE(stamped);
  REQUIRE(stamped->differences.size() == 1);
  CHECK_THAT(stamped->differences[0].detail, Catch::Contains("timestamps"));
}

}  // namespace
}  // namespace sagebuild::wheel
