// matrix.yaml text -> Matrix, or every problem found, each located. A pure function: no file
// access, no exceptions escape, so it can be fuzzed and tested on strings.
#pragma once

#include <optional>
#include <string_view>

#include "matrix/diagnostics.h"
#include "matrix/model.h"

namespace sagebuild::matrix {

struct LoadResult {
  std::optional<Matrix> matrix;  // set only when there are no diagnostics
  Diagnostics diagnostics;
};

// Parses and validates: schema, cross-references (versions, architectures, profiles), and that
// every profile expands to a non-empty set of entries with unique ids.
LoadResult load_matrix(std::string_view text, std::string_view file_name);

}  // namespace sagebuild::matrix
