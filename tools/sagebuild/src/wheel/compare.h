// Compares two wheels for `sagebuild build --check-reproducible`: byte identity first, and when
// they differ, which entries differ and how, so that the cause (a timestamp, a build path in a
// binary, an entry order) can be found without unpacking by hand.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.h"

namespace sagebuild::wheel {

struct WheelDifference {
  std::string entry;   // archive member, or "" for the archive as a whole
  std::string detail;  // "only in the first", "contents differ (1234 vs 1240 bytes)", ...
};

struct WheelComparison {
  bool identical = false;  // byte for byte
  std::vector<WheelDifference> differences;
};

Expected<WheelComparison> compare_wheels(const std::filesystem::path& first,
                                         const std::filesystem::path& second);

}  // namespace sagebuild::wheel
