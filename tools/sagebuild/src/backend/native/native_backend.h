// The native backend: each Linux entry built on this machine (entry_build.h), its plan from
// build_plan.h, its doctor section from doctor.h.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace sagebuild::backend {

std::unique_ptr<BuildBackend> make_native_backend();

}  // namespace sagebuild::backend
