#include "wheel/filename.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/text.h"
#include "wheel/naming.h"

namespace sagebuild::wheel {
namespace {

bool is_ascii_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), is_ascii_word);
}

Error invalid(std::string_view why, std::string_view filename) {
  return Error{fmt::format("invalid wheel filename ({}): '{}'", why, filename)};
}

}  // namespace

std::string canonicalize_name(std::string_view name) {
  std::string out;
  bool in_run = false;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_run) out += '-';
      in_run = true;
    } else {
      out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      in_run = false;
    }
  }
  return out;
}

Expected<WheelFilename> parse_wheel_filename(std::string_view filename) {
  if (std::any_of(filename.begin(), filename.end(),
                  [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return invalid("non-ASCII characters", filename);
  }
  if (!filename.ends_with(".whl")) return invalid("extension must be '.whl'", filename);
  const std::string_view stem = filename.substr(0, filename.size() - 4);
  const auto dashes = std::count(stem.begin(), stem.end(), '-');
  if (dashes != 4 && dashes != 5) return invalid("wrong number of parts", filename);

  // split("-", dashes - 2): the last part keeps its two dashes (the tag triple).
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (int i = 0; i < dashes - 2; ++i) {
    const std::size_t dash = stem.find('-', start);
    parts.push_back(stem.substr(start, dash - start));
    start = dash + 1;
  }
  parts.push_back(stem.substr(start));

  WheelFilename result;
  result.name_part = std::string(parts[0]);
  if (result.name_part.empty() || result.name_part.find("__") != std::string::npos ||
      !std::all_of(result.name_part.begin(), result.name_part.end(),
                   [](char c) { return is_ascii_word(c) || c == '.'; })) {
    return invalid("invalid project name", filename);
  }
  result.canonical_name = canonicalize_name(result.name_part);

  result.version_text = std::string(parts[1]);
  auto version = parse_pep440(parts[1]);
  if (!version) return invalid("invalid version", filename);
  result.version = *version;

  if (dashes == 5) {
    const std::string_view build = parts[2];
    std::size_t digits = 0;
    while (digits < build.size() && build[digits] >= '0' && build[digits] <= '9')
      ++digits;
    if (digits == 0) {
      return Error{fmt::format("invalid build number: {} in '{}'", build, filename)};
    }
    const std::string number(build.substr(0, digits));
    const std::size_t first = number.find_first_not_of('0');
    result.build =
        BuildTag{std::string(build), first == std::string::npos ? "0" : number.substr(first),
                 std::string(build.substr(digits))};
  }

  result.tag_text = std::string(parts.back());
  std::vector<std::vector<std::string>> components;
  for (const std::string& component : text::split(result.tag_text, '-')) {
    components.push_back(text::split(component, '.'));
    if (std::find(components.back().begin(), components.back().end(), "") !=
        components.back().end()) {
      return invalid("invalid tag component", filename);
    }
  }
  for (const std::string& interpreter : components[0]) {
    if (!is_identifier(interpreter)) return invalid("invalid tag component", filename);
  }
  for (const auto& i : components[0]) {
    for (const auto& a : components[1]) {
      for (const auto& p : components[2])
        result.tags.push_back({text::ascii_lower(i), text::ascii_lower(a), text::ascii_lower(p)});
    }
  }
  std::sort(result.tags.begin(), result.tags.end());
  result.tags.erase(std::unique(result.tags.begin(), result.tags.end()), result.tags.end());
  return result;
}

std::string WheelFilename::dist_info_dir() const {
  return escape_distribution_name(name_part) + "-" + version_text + ".dist-info/";
}

}  // namespace sagebuild::wheel
