#include "util/glob.h"

#include <algorithm>
#include <set>

namespace sagebuild::glob {
namespace {

// Matches a "[...]" class at pattern[p] against c. Returns the index after the class, or 0 when
// the class is unterminated (then '[' is an ordinary character).
std::size_t match_class(std::string_view pattern, std::size_t p, char c, bool& matched) {
  std::size_t i = p + 1;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negate = true;
    ++i;
  }
  bool found = false;
  bool first = true;
  while (i < pattern.size() && (pattern[i] != ']' || first)) {
    first = false;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      found = found || (pattern[i] <= c && c <= pattern[i + 2]);
      i += 3;
    } else {
      found = found || pattern[i] == c;
      ++i;
    }
  }
  if (i >= pattern.size()) {
    return 0;
  }
  matched = found != negate;
  return i + 1;
}

}  // namespace

bool matches(std::string_view pattern, std::string_view text) {
  // Iterative matcher with single-star backtracking: linear in practice, no recursion.
  std::size_t p = 0, t = 0;
  std::size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = p++;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        bool matched = false;
        if (const std::size_t next = match_class(pattern, p, text[t], matched); next != 0) {
          if (matched) {
            p = next;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {
          ++p;
          ++t;
          continue;
        }
      } else if (pc == text[t]) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star_p == std::string_view::npos) {
      return false;
    }
    p = star_p + 1;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

namespace {

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    out.push_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

bool has_wildcard(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

}  // namespace

bool matches_path(std::string_view pattern, std::string_view path) {
  const auto ps = segments(pattern);
  const auto ts = segments(path);
  // reach[j]: the first i pattern segments can match the first j path segments. One row per
  // pattern segment: O(pattern x path), no recursion.
  std::vector<char> reach(ts.size() + 1, 0);
  reach[0] = 1;
  for (const std::string_view seg : ps) {
    std::vector<char> next(ts.size() + 1, 0);
    if (seg == "**") {
      char any = 0;
      for (std::size_t j = 0; j <= ts.size(); ++j) {
        any = static_cast<char>(any || reach[j]);
        next[j] = any;
      }
    } else {
      for (std::size_t j = 0; j < ts.size(); ++j) {
        if (reach[j] && matches(seg, ts[j])) next[j + 1] = 1;
      }
    }
    reach = std::move(next);
  }
  return reach[ts.size()] != 0;
}

std::vector<std::string> find_files(const std::filesystem::path& root,
                                    const std::vector<std::string>& patterns,
                                    const std::vector<std::string>& exclude) {
  std::set<std::string> found;
  auto keep = [&](const std::string& rel) {
    const bool wanted = std::any_of(patterns.begin(), patterns.end(),
                                    [&](const std::string& p) { return matches_path(p, rel); });
    const bool dropped = std::any_of(exclude.begin(), exclude.end(),
                                     [&](const std::string& p) { return matches_path(p, rel); });
    if (wanted && !dropped) found.insert(rel);
  };
  for (const std::string& pattern : patterns) {
    // The literal directories before the first wildcard: where this pattern's files can be.
    std::string base;
    for (const std::string_view seg : segments(pattern)) {
      if (has_wildcard(seg)) break;
      base += (base.empty() ? "" : "/") + std::string(seg);
    }
    std::error_code ec;
    const std::filesystem::path start = base.empty() ? root : root / base;
    if (std::filesystem::is_regular_file(start, ec)) {
      keep(base);
      continue;
    }
    for (auto it = std::filesystem::recursive_directory_iterator(start, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) {
        keep(std::filesystem::relative(it->path(), root, ec).generic_string());
      }
    }
  }
  return {found.begin(), found.end()};
}

}  // namespace sagebuild::glob
