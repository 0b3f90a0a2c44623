#include "wheel/pep440.h"

#include <regex>

#include "util/text.h"

namespace sagebuild::wheel {
namespace {

// packaging.version.VERSION_PATTERN, in ECMAScript syntax (no possessive quantifiers: they only
// change speed there, not what matches), anchored, case-insensitive.
const std::regex& version_regex() {
  static const std::regex kPattern(
      "^v?"
      "(?:([0-9]+)!)?"                                               // 1 epoch
      "([0-9]+(?:\\.[0-9]+)*)"                                       // 2 release
      "(?:[._-]?(alpha|a|beta|b|preview|pre|c|rc)[._-]?([0-9]+)?)?"  // 3,4 pre
      "(?:(?:-([0-9]+))|(?:[._-]?(post|rev|r)[._-]?([0-9]+)?))?"     // 5 post_n1; 6,7 post
      "(?:[._-]?(dev)[._-]?([0-9]+)?)?"                              // 8,9 dev
      "(?:\\+([a-z0-9]+(?:[._-][a-z0-9]+)*))?$",                     // 10 local
      std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
  return kPattern;
}

std::string strip_zeros(const std::string& digits) {
  const std::size_t first = digits.find_first_not_of('0');
  return first == std::string::npos ? "0" : digits.substr(first);
}

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

std::optional<Pep440Version> parse_pep440(std::string_view text) {
  while (!text.empty() && is_ascii_space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && is_ascii_space(text.back()))
    text.remove_suffix(1);
  if (text.empty() || text.size() > 512) return std::nullopt;
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, version_regex())) return std::nullopt;

  std::string out;
  if (m[1].matched && strip_zeros(m[1].str()) != "0") out += strip_zeros(m[1].str()) + "!";
  std::vector<std::string> release;
  for (const std::string& part : text::split(m[2].str(), '.'))
    release.push_back(strip_zeros(part));
  out += text::join(release, ".");
  if (m[3].matched) {
    const std::string letter = text::ascii_lower(m[3].str());
    const std::string canonical = letter == "alpha"  ? "a"
                                  : letter == "beta" ? "b"
                                  : letter == "c" || letter == "pre" || letter == "preview"
                                      ? "rc"
                                      : letter;
    out += canonical + (m[4].matched ? strip_zeros(m[4].str()) : "0");
  }
  if (m[5].matched) {
    out += ".post" + strip_zeros(m[5].str());
  } else if (m[6].matched) {
    out += ".post" + (m[7].matched ? strip_zeros(m[7].str()) : std::string("0"));
  }
  if (m[8].matched) out += ".dev" + (m[9].matched ? strip_zeros(m[9].str()) : std::string("0"));

  Pep440Version version;
  version.public_part = out;
  if (m[10].matched) {
    // Local segments: separators become '.', numeric parts lose leading zeros, letters lower.
    std::string local;
    std::string part;
    const std::string raw = m[10].str() + ".";
    for (const char c : raw) {
      if (c == '.' || c == '_' || c == '-') {
        const bool numeric = part.find_first_not_of("0123456789") == std::string::npos;
        if (!local.empty()) local += '.';
        local += numeric ? strip_zeros(part) : text::ascii_lower(part);
        part.clear();
      } else {
        part += c;
      }
    }
    out += "+" + local;
    version.has_local = true;
  }
  version.normalized = out;
  return version;
}

}  // namespace sagebuild::wheel
