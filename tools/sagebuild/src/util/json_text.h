// JSON as text, always: nlohmann's dump() throws on a string that is not UTF-8, and the strings
// sagebuild prints come from files it does not control (wheel entry names, matrix.yaml values,
// paths). Invalid bytes become U+FFFD, so one odd name never costs the whole report.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sagebuild {

template <typename Json>
std::string json_text(const Json& doc, int indent = -1) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Parses JSON from a file sagebuild did not write itself (results files, API answers) keeping
// no value nested deeper than `max_depth`: deeper structures are dropped while parsing, so that
// printing or destroying the document never recurses without bound (a 100,000-deep array
// overflowed the stack). A discarded result (is_discarded()) on malformed text.
inline nlohmann::json parse_json_bounded(std::string_view text, int max_depth = 64) {
  bool too_deep = false;
  auto document = nlohmann::json::parse(
      text,
      [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > max_depth) too_deep = true;
        return depth <= max_depth;
      },
      false);
  if (too_deep) return nlohmann::json(nlohmann::json::value_t::discarded);
  return document;
}

}  // namespace sagebuild
