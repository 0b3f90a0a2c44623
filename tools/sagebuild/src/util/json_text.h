// JSON as text, always: nlohmann's dump() throws on a string that is not UTF-8, and the strings
// sagebuild prints come from files it does not control (wheel entry names, matrix.yaml values,
// paths). Invalid bytes become U+FFFD, so one odd name never costs the whole report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace sagebuild {

template <typename Json>
std::string json_text(const Json& doc, int indent = -1) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The deepest nesting of arrays and objects in JSON text (strings skipped), in one pass.
inline int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// Parses JSON from a file sagebuild did not write itself (results files, API answers), refusing
// (a discarded result, as for malformed text) a value nested deeper than `max_depth`, so that
// printing or destroying the document never recurses without bound (a 100,000-deep array
// overflowed the stack). Linear: the depth is measured in a pass of its own, not by a parser
// callback (which made a 6 MB file take seconds).
inline nlohmann::json parse_json_bounded(std::string_view text, int max_depth = 64) {
  if (json_nesting_depth(text) > max_depth) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// A member of a JSON object from outside (an API answer, an attestation file), read as T
// (std::string, bool, std::int64_t or std::uint64_t): nothing where `doc` is not an object, the
// member is missing or holds another type. nlohmann's value() and get() throw on a wrong type;
// from a server that is an answer to refuse with a message, never an exception.
template <typename T>
std::optional<T> json_get(const nlohmann::json& doc, std::string_view key) {
  if (!doc.is_object()) return std::nullopt;
  const auto it = doc.find(key);
  if (it == doc.end()) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    if (it->is_string()) return it->template get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (it->is_boolean()) return it->template get<bool>();
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    if (it->is_number_unsigned()) return it->template get<std::uint64_t>();
  } else {
    static_assert(std::is_same_v<T, std::int64_t>, "json_get reads strings, bools and integers");
    if (it->is_number_integer()) return it->template get<std::int64_t>();
  }
  return std::nullopt;
}

// json_get() with a fallback.
template <typename T>
T json_or(const nlohmann::json& doc, std::string_view key, T fallback) {
  return json_get<T>(doc, key).value_or(std::move(fallback));
}

}  // namespace sagebuild
