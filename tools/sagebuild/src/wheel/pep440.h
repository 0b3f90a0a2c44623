// PEP 440 versions with the acceptance and normalisation of packaging.version.Version, so that
// sagebuild and pip agree on what a wheel's version is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sagebuild::wheel {

struct Pep440Version {
  std::string normalized;   // str(packaging.version.Version(text)): "1.0rc1", "2!1.0.post0"
  bool has_local = false;   // "+label" present
  std::string public_part;  // normalized without the local label
};

// Accepts what packaging accepts (leading "v", separators, alternative spellings, surrounding
// ASCII whitespace); returns nothing otherwise.
std::optional<Pep440Version> parse_pep440(std::string_view text);

}  // namespace sagebuild::wheel
