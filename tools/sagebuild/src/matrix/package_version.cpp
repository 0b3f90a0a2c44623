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
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(text.begin(), text.end(), match, pattern) || match.size() < 2) {
    return Error{fmt::format("no version found in '{}': package.version.regex '{}' does not match",
                             source.file, source.regex)};
  }
  std::string version = match[1].str();
  if (!is_pep440_public_version(version)) {
    return Error{fmt::format("'{}' in '{}' is not a PEP 440 public version (like 2.2.0)", version,
                             source.file)};
  }
  return version;
}

Expected<std::string> read_package_version(const std::filesystem::path& root,
                                           const VersionSource& source) {
  auto content = fs::read_file(root / source.file);
  if (!content) {
    return Error{fmt::format("cannot read the package version: {}", content.error().message)};
  }
  return extract_version(*content, source);
}

}  // namespace sagebuild::matrix
