#include "matrix/package_version.h"

#include <regex>

#include <fmt/format.h>

#include "util/bounded_regex.h"
#include "util/fs.h"

namespace sagebuild::matrix {

bool is_pep440_public_version(std::string_view version) {
  // The canonical grammar of PEP 440's appendix, without the local segment.
  static const std::regex kPublic(
      R"(^v?([0-9]+!)?[0-9]+(\.[0-9]+)*([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?)"
      R"(((-[0-9]+)|([-_.]?(post|rev|r)[-_.]?[0-9]*))?([-_.]?dev[-_.]?[0-9]*)?$)",
      std::regex::icase);
  return std::regex_match(version.begin(), version.end(), kPublic);
}

Expected<std::string> extract_version(std::string_view text, const VersionSource& source) {
  auto pattern = BoundedRegex::compile(source.regex);
  if (!pattern) {
    return Error{fmt::format("package.version.regex is not a valid regular expression: {}",
                             pattern.error().message)};
  }
  // One line at a time, each at most kMaxLine characters: a version is on one line, and the
  // matcher's budget (util/bounded_regex.h) holds per line.
  constexpr std::size_t kMaxLine = 1024;
  std::string version;
  bool found = false;
  for (std::size_t at = 0; at < text.size() && !found;) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.size() > kMaxLine) continue;  // no version line is this long
    auto match = pattern->first_group(line);
    if (!match) {
      return Error{
          fmt::format("package.version.regex on '{}': {}", source.file, match.error().message)};
    }
    if (*match) {
      version = **match;
      found = true;
    }
  }
  if (!found) {
    return Error{
        fmt::format("no version found in '{}': package.version.regex '{}' does not match "
                    "any line (of at most {} characters)",
                    source.file, source.regex, kMaxLine)};
  }
  if (version.size() > 64) {
    return Error{fmt::format("the version in '{}' is {} characters long; not a version",
                             source.file, version.size())};
  }
  if (!is_pep440_public_version(version)) {
    return Error{fmt::format("'{}' in '{}' is not a PEP 440 public version (like 2.2.0)", version,
                             source.file)};
  }
  return version;
}

Expected<std::string> read_package_version(const std::filesystem::path& root,
                                           const VersionSource& source) {
  auto content = fs::read_file(root / source.file, 4u << 20);
  if (!content) {
    return Error{fmt::format("cannot read the package version: {}", content.error().message)};
  }
  return extract_version(*content, source);
}

}  // namespace sagebuild::matrix
