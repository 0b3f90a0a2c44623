#include "cli/terminal.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "cli/log_safe_stream.h"

#ifdef _WIN32
#include <io.h>
#define SAGEBUILD_ISATTY(fd) _isatty(fd)
#else
#include <unistd.h>
#define SAGEBUILD_ISATTY(fd) isatty(fd)
#endif

namespace sagebuild::cli {

// toolkit/packages/core/src/command.ts: escapeData and escapeProperty.
std::string escape_data(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_property(std::string_view s) {
  std::string out;
  for (const char c : escape_data(s)) {
    switch (c) {
      case ':':
        out += "%3A";
        break;
      case ',':
        out += "%2C";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool stderr_is_terminal() {
  return SAGEBUILD_ISATTY(2) != 0;
}

bool stdout_is_terminal() {
  return SAGEBUILD_ISATTY(1) != 0;
}

bool color_wanted() {
  // no-color.org: NO_COLOR set to anything but the empty string turns colour off.
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::string_view(term) == "dumb");
}

bool terminal_redraws() {
  // A dumb terminal cannot move the cursor up: it gets one line per event.
  const char* term = std::getenv("TERM");
  return stdout_is_terminal() && !(term && std::string_view(term) == "dumb");
}

bool running_in_github_actions() {
  const char* value = std::getenv("GITHUB_ACTIONS");
  return value && std::string_view(value) == "true";
}

std::string error_annotation(std::string_view file, int line, int column,
                             std::string_view message) {
  std::string properties = "file=" + escape_property(file);
  if (line > 0) {
    properties += fmt::format(",line={}", line);
    if (column > 0) properties += fmt::format(",col={}", column);
  }
  return workflow_command(fmt::format("::error {}::{}", properties, escape_data(message)));
}

}  // namespace sagebuild::cli
