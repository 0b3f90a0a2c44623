// The one Catch2 runner for every *_test.cpp beside the code it tests.
#define CATCH_CONFIG_MAIN
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "test_support.h"

namespace sagebuild::testing {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string compare_golden(const std::filesystem::path& golden, const std::string& actual) {
  const char* update = std::getenv("SAGEBUILD_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden, std::ios::binary) << actual;
    return "";
  }
  if (!std::filesystem::exists(golden)) {
    return golden.string() + " does not exist (run with SAGEBUILD_UPDATE_GOLDEN=1 to create it)";
  }
  const std::string expected = read_text(golden);
  if (expected == actual) return "";
  std::size_t line = 1, i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) {
    if (expected[i] == '\n') ++line;
    ++i;
  }
  return golden.string() + " differs from the output at line " + std::to_string(line) +
         "\n--- actual ---\n" + actual;
}

}  // namespace sagebuild::testing
