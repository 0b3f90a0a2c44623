// Small string helpers shared by every room.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sagebuild::text {

std::vector<std::string> split(std::string_view s, char separator);
std::string join(std::span<const std::string> parts, std::string_view separator);
std::string_view trim(std::string_view s);

// The last `count` lines of `s` (trimmed), each indented by `indent`: the tail of a log that
// an error message quotes.
std::string last_lines(std::string_view s, std::size_t count, std::string_view indent = "  ");

// Levenshtein distance with adjacent transpositions (optimal string alignment), so that
// "pyton" -> "python" and "stabel" -> "stable" are both one edit.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a likely typo: at most one edit
// for short words, up to a third of the length for longer ones. Ties go to the earlier candidate.
std::optional<std::string> closest_match(std::string_view word,
                                         std::span<const std::string> candidates);

// " (did you mean 'x'?)" or "" — appended to error messages.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

// `text` with each "{name}" of `values` replaced by its value (single pass, left to right: a
// value that itself contains "{name}" is not expanded again). Unknown "{...}" stay as they are.
std::string fill_placeholders(std::string_view text,
                              std::span<const std::pair<std::string, std::string>> values);

// Percent-encoding of a URL component: RFC 3986 unreserved characters kept, every other byte
// as %XX.
std::string percent_encode(std::string_view value);

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF):
// what Python's strict "utf-8" codec accepts.
bool is_valid_utf8(std::string_view s);

// ASCII-only lower case (names and tags in packaging metadata are ASCII; locale-free).
std::string ascii_lower(std::string_view s);
std::string ascii_upper(std::string_view s);

// `s` in single quotes for a POSIX shell, a quote inside written '\'' (any content reads back).
std::string shell_single_quoted(std::string_view s);

// `s` safe to show in a message: control characters and bytes outside ASCII as \xNN.
std::string printable(std::string_view s);

}  // namespace sagebuild::text
