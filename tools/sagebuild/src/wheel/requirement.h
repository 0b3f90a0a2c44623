// PEP 508 requirements ("torch==2.11.*", "numpy>=1.26; python_version >= '3.10'") as
// packaging.requirements.Requirement reads them, which is what pip does with each Requires-Dist:
// a value it cannot parse makes pip refuse the wheel at install time ("invalid metadata"), so
// verify-wheel refuses it first.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sagebuild::wheel {

// Why `text` is not a requirement packaging accepts, or nothing when it is one.
std::optional<std::string> requirement_error(std::string_view text);

}  // namespace sagebuild::wheel
