// Reads the package version from its one source, as package.version in matrix.yaml describes it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "matrix/model.h"
#include "util/expected.h"

namespace sagebuild::matrix {

// The first capture group of `regex` in `text`, checked to be a PEP 440 public version.
Expected<std::string> extract_version(std::string_view text, const VersionSource& source);

// Reads `source.file` relative to `root` (the directory holding matrix.yaml).
Expected<std::string> read_package_version(const std::filesystem::path& root,
                                           const VersionSource& source);

// PEP 440 public version (no local "+label"): "2.2.0", "2.2.0rc1", "2.2.0.dev3", "1!2.0.post1".
bool is_pep440_public_version(std::string_view version);

}  // namespace sagebuild::matrix
