// Helpers shared by the unit tests: paths to the repository and test data, and golden files.
#pragma once

#include <filesystem>
#include <string>

namespace sagebuild::testing {

inline std::filesystem::path source_dir() {
  return SAGEBUILD_SOURCE_DIR;
}
inline std::filesystem::path testdata_dir() {
  return SAGEBUILD_TESTDATA_DIR;
}

std::string read_text(const std::filesystem::path& path);

// Compares `actual` with the golden file; with SAGEBUILD_UPDATE_GOLDEN=1 in the environment it
// rewrites the file instead (review the diff before committing). Returns "" when they agree,
// else a description of the first difference.
std::string compare_golden(const std::filesystem::path& golden, const std::string& actual);

}  // namespace sagebuild::testing
