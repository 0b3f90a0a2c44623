// What the output streams are connected to, so that messages fit the place they are read in.
#pragma once

#include <string>
#include <string_view>

namespace sagebuild::cli {

bool stderr_is_terminal();
bool stdout_is_terminal();
bool running_in_github_actions();  // GITHUB_ACTIONS=true
bool color_wanted();               // not NO_COLOR (no-color.org), not TERM=dumb
bool terminal_redraws();           // stdout is a terminal that can redraw lines (not TERM=dumb)

// Workflow command escaping, as the Actions toolkit does it (escapeData, escapeProperty).
std::string escape_data(std::string_view s);
std::string escape_property(std::string_view s);

// A workflow command annotation, escaped as the Actions toolkit escapes data and properties:
// "::error file=matrix.yaml,line=12,col=5::unknown key 'pyton'".
std::string error_annotation(std::string_view file, int line, int column, std::string_view message);

}  // namespace sagebuild::cli
