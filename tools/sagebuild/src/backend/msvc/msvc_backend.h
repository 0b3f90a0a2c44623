// The MSVC backend: Windows entries, planned on any host (msvc.h), built on a Windows runner.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace sagebuild::backend {

std::unique_ptr<BuildBackend> make_msvc_backend();

// The refusal of a Windows entry by a backend that runs here: it builds on its own runner.
PlanProblem built_on_its_runner(const matrix::Entry& e);

}  // namespace sagebuild::backend
