// Helpers shared by the unit tests: paths to the repository and test data, and golden files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
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

// Sets (or, given std::nullopt, removes) an environment variable for the scope of the object,
// then restores what was there, also when a check fails and throws.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    set(name, value);
  }
  ~ScopedEnv() { set(name_, old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void set(const char* name, const std::optional<std::string>& value) {
#ifdef _WIN32
    ::_putenv_s(name, value ? value->c_str() : "");  // "" removes it there
#else
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
#endif
  }

  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace sagebuild::testing
