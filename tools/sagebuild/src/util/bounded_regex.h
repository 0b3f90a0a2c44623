// Regular expressions from configuration (package.version.regex in matrix.yaml) on PCRE2 with a
// budget: std::regex backtracks without bound (`^(x+x+)+y()` on 34 characters never ends) and
// recurses once per character. PCRE2 counts its steps and stops at the limit with an error, so
// a hostile pattern costs a bounded amount of work, whatever the text.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/expected.h"

namespace sagebuild {

class BoundedRegex {
 public:
  // Steps of the matcher for one search; a version regex on a 1,024-character line needs
  // thousands.
  static constexpr unsigned kMatchLimit = 1'000'000;

  // Compiles `pattern` (Perl syntax; "^" and "$" match at line ends). The error names the
  // offending offset.
  static Expected<BoundedRegex> compile(std::string_view pattern);

  int capture_groups() const;

  // The first capture group of the first match in `subject`; nothing when it does not match;
  // an error when the search would take more than kMatchLimit steps.
  Expected<std::optional<std::string>> first_group(std::string_view subject) const;

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace sagebuild
