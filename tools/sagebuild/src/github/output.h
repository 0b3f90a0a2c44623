// GitHub Actions file commands: step outputs appended to $GITHUB_OUTPUT in the two forms the
// runner parses ("name=value" and the heredoc "name<<DELIMITER" form for values with newlines).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace sagebuild::github {

// Formats one output as the Actions toolkit does: "name=value\n" when the value is one line,
// else "name<<ghadelimiter_<random>\nvalue\nghadelimiter_<random>\n" with a delimiter that
// occurs in neither name nor value.
Expected<std::string> format_output(std::string_view name, std::string_view value);

// Appends the output to the file named by $GITHUB_OUTPUT.
Expected<Ok> set_output(std::string_view name, std::string_view value);

// Parses a GITHUB_OUTPUT file the way the runner does (for tests and `sagebuild` self-checks).
Expected<std::map<std::string, std::string>> parse_output_file(std::string_view content);

}  // namespace sagebuild::github
