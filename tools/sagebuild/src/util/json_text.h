// JSON as text, always: nlohmann's dump() throws on a string that is not UTF-8, and the strings
// sagebuild prints come from files it does not control (wheel entry names, matrix.yaml values,
// paths). Invalid bytes become U+FFFD, so one odd name never costs the whole report.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sagebuild {

template <typename Json>
std::string json_text(const Json& doc, int indent = -1) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sagebuild
