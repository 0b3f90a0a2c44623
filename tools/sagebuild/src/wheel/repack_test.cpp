#include "wheel/repack.h"

#include <fstream>
#include <random>

#include <catch2/catch.hpp>

#include "test_support.h"
#include "wheel/verify.h"
#include "wheel/zip_writer.h"

namespace sagebuild::wheel {
namespace {

std::vector<std::uint8_t> bytes(std::string_view s) {
  return {s.begin(), s.end()};
}

struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("sagebuild-repack-" + std::to_string(std::random_device{}()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST_CASE("a backend's wheel becomes a named, recorded, provenance-carrying wheel", "[repack]") {
  TempDir dir;
  const auto input = dir.path / "demo-1.0-cp312-cp312-linux_x86_64.whl";
  // What a build backend writes: no build tag, a RECORD of its own (deliberately stale here).
  REQUIRE(write_zip(
      input,
      {{"demo/__init__.py", bytes("x = 1\n"), false},
       {"demo-1.0.dist-info/METADATA", bytes("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"),
        false},
       {"demo-1.0.dist-info/WHEEL",
        bytes("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n"),
        false},
       {"demo-1.0.dist-info/RECORD", bytes("stale,,\n"), false}},
      source_date_epoch()));
  Provenance p;
  p.sagebuild_version = "0.1.0";
  p.package = "demo";
  p.version = "1.0";
  p.torch = "2.8.0";
  p.cuda = "12.9.1";
  p.python = "3.12";
  p.platform_tag = "linux_x86_64";
  p.archs = {"9.0a"};
  auto out = repack_wheel({input, dir.path, "280.129", p});
  REQUIRE(out);
  CHECK(out->filename() == "demo-1.0-280.129-cp312-cp312-linux_x86_64.whl");
  // The archive, RECORD, WHEEL and provenance checks all pass on the result.
  VerifyOptions options;
  options.select = {"A", "R", "H", "P"};
  const WheelReport report = verify_wheel(*out, options);
  INFO(format_report(report));
  CHECK(report.ok());
  REQUIRE(report.provenance);
  CHECK(report.provenance->torch == "2.8.0");

  // Deterministic: the same input gives the same bytes.
  const std::string first = testing::read_text(*out);
  std::filesystem::remove(*out);
  REQUIRE(repack_wheel({input, dir.path, "280.129", p}));
  CHECK(testing::read_text(*out) == first);
}

TEST_CASE("record lines quote what CSV needs quoted", "[repack]") {
  CHECK(record_line("a/b.py", "sha256=x", "1") == "a/b.py,sha256=x,1\n");
  CHECK(record_line("a,\"b\".py", "", "") == "\"a,\"\"b\"\".py\",,\n");
}

TEST_CASE("an input that is not a wheel is refused, nothing written", "[repack]") {
  TempDir dir;
  const auto input = dir.path / "not-a-wheel.whl";
  std::ofstream(input) << "plain text";
  CHECK_FALSE(repack_wheel({input, dir.path, "1", {}}));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path),
                      std::filesystem::directory_iterator()) == 1);
}

}  // namespace
}  // namespace sagebuild::wheel
