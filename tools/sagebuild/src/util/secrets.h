// Keeping secrets out of text: every message that may contain server-supplied or transport text
// passes through redact() with the secrets in play before it is printed.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace sagebuild {

// `text` with each non-empty secret replaced by "***".
std::string redact(std::string text, std::initializer_list<std::string_view> secrets);

// A URL fit to print: "https://user:token@host/x" -> "https://user:***@host/x",
// "https://token@host/x" -> "https://***@host/x" (index URLs carry credentials that way).
std::string redact_url(std::string_view url);

}  // namespace sagebuild
