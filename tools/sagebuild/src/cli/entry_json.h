// The JSON form of a build entry, shared by `matrix --format json|github` and later commands.
#pragma once

#include <nlohmann/json.hpp>

#include "matrix/expand.h"

namespace sagebuild::cli {

nlohmann::ordered_json entry_to_json(const matrix::Entry& entry);

}  // namespace sagebuild::cli
