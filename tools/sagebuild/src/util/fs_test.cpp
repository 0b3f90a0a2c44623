#include "util/fs.h"

#include <fstream>
#include <random>

#include <catch2/catch.hpp>

#include "test_support.h"

namespace sagebuild::fs {
namespace {

TEST_CASE("atomic writes replace the file and leave no temporary behind", "[fs]") {
  TempDir dir;
  const auto file = dir.path() / "out.json";
  REQUIRE(write_file_atomic(file, "first"));
  REQUIRE(write_file_atomic(file, "second"));
  CHECK(testing::read_text(file) == "second");
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                      std::filesystem::directory_iterator()) == 1);
}

TEST_CASE("a failed write keeps what was there", "[fs]") {
  TempDir dir;
  auto result = write_file_atomic(dir.path() / "missing-dir" / "x", "data");
  REQUIRE_FALSE(result);
  CHECK(result.error().message.find("cannot create") != std::string::npos);
}

TEST_CASE("append and read", "[fs]") {
  TempDir dir;
  const auto file = dir.path() / "log";
  REQUIRE(append_file(file, "a\n"));
  REQUIRE(append_file(file, "b\n"));
  CHECK(*read_file(file) == "a\nb\n");
  auto missing = read_file(dir.path() / "nope");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("No such file") != std::string::npos);
}

TEST_CASE("find_upwards", "[fs]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "a" / "b");
  std::ofstream(dir.path() / "marker.yaml") << "x";
  CHECK(find_upwards(dir.path() / "a" / "b", "marker.yaml") == dir.path());
}

}  // namespace
}  // namespace sagebuild::fs
