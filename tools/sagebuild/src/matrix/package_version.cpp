#include "matrix/package_version.h"

#include <regex>

#include <fmt/format.h>

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
  std::regex pattern;
  try {
    pattern = std::regex(source.regex, std::regex::multiline);
  } catch (const std::regex_error& e) {
    return Error{
        fmt::format("package.version.regex is not a valid regular expression: {}", e.what())};
  }
  // One line at a time, each at most kMaxLine characters: libstdc++'s regex recurses per
  // character matched, so a pattern applied to a long run of text could overflow the stack.
  constexpr std::size_t kMaxLine = 1024;
  std::string version;
  bool found = false;
  for (std::size_t at = 0; at < text.size() && !found;) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.size() > kMaxLine) continue;  // no version line is this long
    std::match_results<std::string_view::const_iterator> match;
    if (std::regex_search(line.begin(), line.end(), match, pattern) && match.size() >= 2) {
      version = match[1].str();
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
