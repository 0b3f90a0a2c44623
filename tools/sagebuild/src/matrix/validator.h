// The cross-reference checks of a matrix whose structure has been read: architectures against
// the toolkits that must target them, torch's CUDA and Python lists and build-tag digits, the
// stable ABI's target, Windows platforms without Docker, profiles (bases, platforms, archs) and
// every profile's expansion. Each problem goes to the reader's diagnostics, located.
#pragma once

#include "matrix/model.h"
#include "matrix/yaml_reader.h"

namespace sagebuild::matrix {

void check_cross_references(const Matrix& m, YamlReader& reader);

}  // namespace sagebuild::matrix
