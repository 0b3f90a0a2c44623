// Glob-like selectors for matrix.yaml ("2.8.*", "3.1?", "[0-9]*"), written here rather than with
// fnmatch(3) so that Windows builds behave the same. Versions never contain '/', so there is no
// path semantics: '*' matches any run of characters, '?' one, "[...]" a class ("[!...]" negated).
#pragma once

#include <string_view>

namespace sagebuild::glob {

bool matches(std::string_view pattern, std::string_view text);

}  // namespace sagebuild::glob
