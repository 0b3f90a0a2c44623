#include "wheel/repack.h"

#include <fstream>

#include <catch2/catch.hpp>

#include "test_support.h"
#include "util/fs.h"
#include "wheel/verify.h"
#include "wheel/zip_writer.h"

namespace sagebuild::wheel {
namespace {

std::vector<std::uint8_t> bytes(std::string_view s) {
  return {s.begin(), s.end()};
}

using fs::TempDir;

// What a build backend writes: no build tag, a RECORD of its own (deliberately stale here).
std::filesystem::path backend_wheel(const std::filesystem::path& dir) {
  const auto input = dir / "demo-1.0-cp312-cp312-linux_x86_64.whl";
  REQUIRE(write_zip(
      input,
      {{"demo/__init__.py", bytes("x = 1\n"), false},
       {"demo-1.0.data/scripts/demo-tool", bytes("#!python\n"), true},
       {"demo-1.0.dist-info/METADATA",
        bytes("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\nVersion: 1.0 in the text\n"),
        false},
       {"demo-1.0.dist-info/WHEEL",
        bytes("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n"),
        false},
       {"demo-1.0.dist-info/RECORD", bytes("stale,,\n"), false}},
      source_date_epoch()));
  return input;
}

Provenance demo_provenance(const std::string& version) {
  Provenance p;
  p.sagebuild_version = "0.1.0";
  p.package = "demo";
  p.version = version;
  p.torch = "2.8.0";
  p.cuda = "12.9.1";
  p.python = "3.12";
  p.platform_tag = "linux_x86_64";
  p.archs = {"9.0a"};
  return p;
}

TEST_CASE("a backend's wheel becomes a named, recorded, provenance-carrying wheel", "[repack]") {
  TempDir dir;
  const auto input = backend_wheel(dir.path());
  const Provenance p = demo_provenance("1.0");
  auto out = repack_wheel({input, dir.path(), "280.129", p});
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
  REQUIRE(repack_wheel({input, dir.path(), "280.129", p}));
  CHECK(testing::read_text(*out) == first);
}

TEST_CASE("a dev version renames the metadata directories and METADATA's header only", "[repack]") {
  TempDir dir;
  const auto input = backend_wheel(dir.path());
  const Provenance p = demo_provenance("1.0.dev3+g0123abc");
  RepackRequest request{input, dir.path(), "280.129", p};
  request.version = "1.0.dev3+g0123abc";
  request.source_date_epoch = 1700000000;
  auto out = repack_wheel(request);
  REQUIRE(out);
  CHECK(out->filename() == "demo-1.0.dev3+g0123abc-280.129-cp312-cp312-linux_x86_64.whl");
  auto archive = ZipArchive::open(*out);
  REQUIRE(archive);
  std::vector<std::string> names;
  for (const auto& e : archive->entries())
    names.push_back(e.name);
  CHECK(names == std::vector<std::string>{
                     "demo-1.0.dev3+g0123abc.data/scripts/demo-tool",
                     "demo/__init__.py",
                     "demo-1.0.dev3+g0123abc.dist-info/METADATA",
                     "demo-1.0.dev3+g0123abc.dist-info/WHEEL",
                     "demo-1.0.dev3+g0123abc.dist-info/sagebuild.json",
                     "demo-1.0.dev3+g0123abc.dist-info/RECORD",
                 });
  CHECK(archive->entries()[0].unix_mode() & 0100);
  std::vector<std::uint8_t> data, scratch;
  auto stream = archive->open_stream();
  REQUIRE_FALSE(archive->read(stream, archive->entries()[2], data, scratch));
  CHECK(std::string(data.begin(), data.end()) ==
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0.dev3+g0123abc\n\n"
        "Version: 1.0 in the text\n");
  VerifyOptions options;
  options.select = {"N001", "A", "R", "H", "M001", "M002", "P"};
  const WheelReport report = verify_wheel(*out, options);
  INFO(format_report(report));
  CHECK(report.ok());
}

TEST_CASE("an entry's mode follows its content, not the backend's archive", "[repack]") {
  CHECK(
      executable_content(bytes("\x7f"
                               "ELF\x02\x01")));
  CHECK(executable_content(bytes("MZ\x90")));
  CHECK(executable_content(bytes("#!/usr/bin/env python\n")));
  CHECK_FALSE(executable_content(bytes("x = 1\n")));
  CHECK_FALSE(executable_content(bytes("")));
  CHECK_FALSE(
      executable_content(bytes("\x7f"
                               "EL")));
  // A library the backend stored as 0644 (a compiled target) and one stored as 0755 (a copied
  // file) give the same wheel.
  TempDir dir;
  std::string wheels[2];
  for (bool mode : {false, true}) {
    const auto out_dir = dir.path() / (mode ? "x" : "plain");
    std::filesystem::create_directories(out_dir);
    const auto input = out_dir / "demo-1.0-cp312-cp312-linux_x86_64.whl";
    REQUIRE(write_zip(input,
                      {{"demo/_lib.so",
                        bytes("\x7f"
                              "ELF-library"),
                        mode},
                       {"demo/data.txt", bytes("text"), !mode},
                       {"demo-1.0.dist-info/METADATA",
                        bytes("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"), false},
                       {"demo-1.0.dist-info/WHEEL",
                        bytes("Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
                              "Tag: cp312-cp312-linux_x86_64\n"),
                        false}},
                      source_date_epoch()));
    auto out = repack_wheel({input, out_dir, "280.129", demo_provenance("1.0")});
    REQUIRE(out);
    auto archive = ZipArchive::open(*out);
    REQUIRE(archive);
    for (const ZipEntry& e : archive->entries()) {
      INFO(e.name);
      if (e.name == "demo/_lib.so") CHECK((e.unix_mode() & 0777) == 0755);
      if (e.name == "demo/data.txt") CHECK((e.unix_mode() & 0777) == 0644);
    }
    wheels[mode] = testing::read_text(*out);
  }
  CHECK(wheels[0] == wheels[1]);
}

TEST_CASE("record lines quote what CSV needs quoted", "[repack]") {
  CHECK(record_line("a/b.py", "sha256=x", "1") == "a/b.py,sha256=x,1\n");
  CHECK(record_line("a,\"b\".py", "", "") == "\"a,\"\"b\"\".py\",,\n");
}

TEST_CASE("an input that is not a wheel is refused, nothing written", "[repack]") {
  TempDir dir;
  const auto input = dir.path() / "not-a-wheel.whl";
  std::ofstream(input) << "plain text";
  CHECK_FALSE(repack_wheel({input, dir.path(), "1", {}}));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                      std::filesystem::directory_iterator()) == 1);
}

TEST_CASE("a delivery copy is made only of what the input's RECORD vouches for", "[repack]") {
  TempDir dir;
  const Provenance p = demo_provenance("1.0");
  // A finished wheel: repacked once, so its RECORD is true.
  auto built = repack_wheel({backend_wheel(dir.path()), dir.path(), "280.129", p});
  REQUIRE(built);
  std::filesystem::create_directory(dir.path() / "out");
  RepackRequest labelled{*built, dir.path() / "out", "280.129", p};
  labelled.version = "1.0+cu129";
  labelled.require_record_match = true;
  CHECK(repack_wheel(labelled));
  // The backend's wheel, whose RECORD is stale: refused, nothing written.
  std::filesystem::create_directory(dir.path() / "refused");
  RepackRequest stale{dir.path() / "demo-1.0-cp312-cp312-linux_x86_64.whl", dir.path() / "refused",
                      "280.129", p};
  stale.require_record_match = true;
  auto refused = repack_wheel(stale);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("not what its RECORD vouches for") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path() / "refused"));
}

}  // namespace
}  // namespace sagebuild::wheel
