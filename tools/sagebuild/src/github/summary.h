// `sagebuild summary`: the results of build entries (build/results/*.json) as the Markdown of a
// GitHub Actions step summary: a table of wheels, the failed entries with their first error
// lines, totals. Kept under GitHub's 1 MiB limit per step summary: past it, rows are dropped and
// a note says how many.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sagebuild::github {

inline constexpr std::size_t kStepSummaryLimit = std::size_t{1024} * 1024;

std::string summary_markdown(const std::vector<nlohmann::json>& results,
                             std::size_t limit = kStepSummaryLimit - 4096);

}  // namespace sagebuild::github
