#include "github/output.h"

#include <algorithm>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "util/fs.h"
#include "util/secrets.h"
#include "util/text.h"

namespace sagebuild::github {
namespace {

std::string random_delimiter() {
  std::random_device random;
  return fmt::format("ghadelimiter_{:08x}-{:04x}-{:04x}-{:04x}-{:08x}{:04x}", random(),
                     random() & 0xffffu, random() & 0xffffu, random() & 0xffffu, random(),
                     random() & 0xffffu);
}

}  // namespace

Expected<std::string> format_output(std::string_view name, std::string_view value) {
  // GitHub's rule for output ids: a letter or '_', then letters, digits, '-' and '_'.
  const auto id_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  };
  if (name.empty() || !std::all_of(name.begin(), name.end(), id_char) || name[0] == '-' ||
      (name[0] >= '0' && name[0] <= '9')) {
    return Error{
        fmt::format("'{}' is not a valid output name (a letter or '_', then letters, "
                    "digits, '-' and '_')",
                    text::printable(name))};
  }
  // The runner reads the file line by line and takes a carriage return for a line break, so a
  // value holding one would not arrive as written.
  if (value.find('\r') != std::string_view::npos) {
    return Error{
        fmt::format("the value of output '{}' contains a carriage return, which GitHub "
                    "would read as a line break",
                    name)};
  }
  if (value.find('\n') == std::string_view::npos) {
    return fmt::format("{}={}\n", name, value);
  }
  const std::string delimiter = random_delimiter();
  if (name.find(delimiter) != std::string_view::npos ||
      value.find(delimiter) != std::string_view::npos) {
    return Error{"output value contains the random delimiter; refusing to write it"};
  }
  return fmt::format("{}<<{}\n{}\n{}\n", name, delimiter, value, delimiter);
}

Expected<Ok> set_output(std::string_view name, std::string_view value) {
  const char* path = std::getenv("GITHUB_OUTPUT");
  if (!path || !*path) {
    return Error{
        "GITHUB_OUTPUT is not set; --format github runs inside a GitHub Actions step "
        "(use --format json elsewhere)"};
  }
  // Later steps read it and the runner may print it: the environment's secrets masked.
  auto text = format_output(name, redact_environment_secrets(std::string(value)));
  if (!text) return text.error();
  return fs::append_file(path, *text);
}

Expected<std::map<std::string, std::string>> parse_output_file(std::string_view content) {
  std::map<std::string, std::string> outputs;
  std::size_t pos = 0;
  auto next_line = [&](std::string_view& line) {
    if (pos >= content.size()) return false;
    std::size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    line = content.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    return true;
  };
  std::string_view line;
  while (next_line(line)) {
    if (line.empty()) continue;
    const std::size_t heredoc = line.find("<<");
    const std::size_t equals = line.find('=');
    if (equals != std::string_view::npos &&
        (heredoc == std::string_view::npos || equals < heredoc)) {
      outputs[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
      continue;
    }
    if (heredoc == std::string_view::npos) {
      return Error{fmt::format("invalid line in output file: '{}'", line)};
    }
    const std::string name(line.substr(0, heredoc));
    const std::string delimiter(line.substr(heredoc + 2));
    std::string value;
    bool closed = false;
    bool first = true;
    while (next_line(line)) {
      if (line == delimiter) {
        closed = true;
        break;
      }
      if (!first) value += '\n';
      value += line;
      first = false;
    }
    if (!closed) {
      return Error{fmt::format("output '{}' has no closing delimiter '{}'", name, delimiter)};
    }
    outputs[name] = value;
  }
  return outputs;
}

}  // namespace sagebuild::github
