// Glob-like selectors for matrix.yaml ("2.8.*", "3.1?", "[0-9]*"), written here rather than with
// fnmatch(3) so that Windows builds behave the same. Versions never contain '/', so there is no
// path semantics: '*' matches any run of characters, '?' one, "[...]" a class ("[!...]" negated).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sagebuild::glob {

bool matches(std::string_view pattern, std::string_view text);

// The same, for '/'-separated paths: each segment of the pattern matches one segment of the
// path, and a "**" segment any number of them (none included): "kernels/src/**",
// "**/*_test.cpp", "python/csrc/*.cpp".
bool matches_path(std::string_view pattern, std::string_view path);

// The regular files under `root` that match any of `patterns` and none of `exclude`, as paths
// relative to `root` ('/'-separated), sorted. Only the directories a pattern can reach are
// walked: the part of each pattern before its first wildcard names where to start.
std::vector<std::string> find_files(const std::filesystem::path& root,
                                    const std::vector<std::string>& patterns,
                                    const std::vector<std::string>& exclude);

}  // namespace sagebuild::glob
