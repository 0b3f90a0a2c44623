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

TEST_CASE("move_file crosses file systems by copy and rename", "[fs]") {
  TempDir here;
  const auto from = here.path() / "a.whl";
  std::ofstream(from, std::ios::binary) << std::string(100000, 'w');
  // /dev/shm is a tmpfs on Linux: another file system than the temporary directory.
  std::error_code ec;
  if (!std::filesystem::is_directory("/dev/shm", ec)) {
    WARN("no /dev/shm here: the cross-file-system move was not tried");
    return;
  }
  const auto target_dir = std::filesystem::path("/dev/shm") / here.path().filename();
  std::filesystem::create_directories(target_dir, ec);
  const auto to = target_dir / "a.whl";
  const auto moved = move_file(from, to);
  INFO((moved ? std::string() : moved.error().message));
  REQUIRE(moved);
  CHECK_FALSE(std::filesystem::exists(from));
  CHECK(read_file(to)->size() == 100000);
  // Nothing else left beside it (the temporary name is gone).
  CHECK(std::distance(std::filesystem::directory_iterator(target_dir),
                      std::filesystem::directory_iterator{}) == 1);
  std::filesystem::remove_all(target_dir, ec);
}

TEST_CASE("read_file with a limit stops there", "[fs]") {
  CHECK(read_file("/dev/zero", 1024).error().message.find("larger than 1 KiB") !=
        std::string::npos);
  TempDir dir;
  std::ofstream(dir.path() / "small") << "abc";
  CHECK(*read_file(dir.path() / "small", 3) == "abc");
}

}  // namespace
}  // namespace sagebuild::fs
