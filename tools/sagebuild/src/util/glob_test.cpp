#include "util/glob.h"

#include <fstream>

#include <catch2/catch.hpp>

#include "util/fs.h"

namespace sagebuild::glob {
namespace {

TEST_CASE("glob patterns on version strings", "[glob]") {
  CHECK(matches("2.8.*", "2.8.0"));
  CHECK_FALSE(matches("2.8.*", "2.9.0"));
  CHECK(matches("3.1?", "3.10"));
  CHECK_FALSE(matches("3.1?", "3.9"));
  CHECK(matches("*", ""));
  CHECK(matches("3.1[0-2]", "3.12"));
  CHECK_FALSE(matches("3.1[0-2]", "3.13"));
  CHECK(matches("3.1[!0-2]", "3.13"));
  CHECK(matches("*.*.0", "2.11.0"));
  CHECK(matches("2.[", "2.["));  // an unterminated class is a literal '['
  CHECK_FALSE(matches("2.8", "2.8.0"));
  CHECK(matches("a*b*c", "aXXbYYc"));
  CHECK_FALSE(matches("a*b*c", "aXXbYY"));
}

TEST_CASE("matching stays fast on pathological patterns", "[glob]") {
  const std::string text(2000, 'a');
  CHECK_FALSE(matches("*a*a*a*a*a*a*a*a*b", text));
}

TEST_CASE("path patterns: '*' stays within a segment, '**' spans any number", "[glob]") {
  CHECK(matches_path("kernels/src/**", "kernels/src/api.cpp"));
  CHECK(matches_path("kernels/src/**", "kernels/src/sm90/attention_sm90.cuh"));
  CHECK_FALSE(matches_path("kernels/src/**", "kernels/srcs/a.cpp"));
  CHECK(matches_path("**/*_test.cpp", "kernels/src/api_test.cpp"));
  CHECK(matches_path("**/*_test.cpp", "api_test.cpp"));  // '**' also matches no segment
  CHECK_FALSE(matches_path("**/*_test.cpp", "kernels/src/api.cpp"));
  CHECK(matches_path("python/csrc/*.cpp", "python/csrc/binding.cpp"));
  CHECK_FALSE(matches_path("python/csrc/*.cpp", "python/csrc/sub/binding.cpp"));
  CHECK(matches_path("CMakeLists.txt", "CMakeLists.txt"));
  CHECK_FALSE(matches_path("CMakeLists.txt", "kernels/CMakeLists.txt"));
  CHECK(matches_path("a/**/b/**/c", "a/x/b/y/z/c"));
}

TEST_CASE("find_files walks only where the patterns point, less the exclusions", "[glob]") {
  const fs::TempDir dir("glob-test");
  const auto touch = [&](const std::string& rel) {
    std::filesystem::create_directories((dir.path() / rel).parent_path());
    std::ofstream(dir.path() / rel) << rel;
  };
  for (const char* rel : {"CMakeLists.txt", "kernels/src/api.cpp", "kernels/src/api_test.cpp",
                          "kernels/src/sm90/k.cuh", "kernels/tests/t.py", "python/csrc/b.cpp"}) {
    touch(rel);
  }
  CHECK(
      find_files(dir.path(), {"CMakeLists.txt", "kernels/src/**"}, {"**/*_test.cpp"}) ==
      std::vector<std::string>{"CMakeLists.txt", "kernels/src/api.cpp", "kernels/src/sm90/k.cuh"});
  CHECK(find_files(dir.path(), {"python/csrc/*.cpp", "missing/**"}, {}) ==
        std::vector<std::string>{"python/csrc/b.cpp"});
}

}  // namespace
}  // namespace sagebuild::glob
