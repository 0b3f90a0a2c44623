// `sagebuild doctor --backend docker`: builds run in containers, so the host's Pythons and
// toolkits do not matter; the client, the engine, buildx and each entry's images do.
#pragma once

#include <optional>
#include <vector>

#include "backend/build_options.h"
#include "backend/doctor_report.h"
#include "matrix/expand.h"
#include "matrix/model.h"

namespace sagebuild::backend {

// The client, the engine and buildx, each missing one with its fix.
DoctorCheck docker_engine_check();

// The Docker backend's examination (BuildBackend::examine): the engine and every entry's images.
DoctorReport examine_docker(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                            const BuildOptions& options);

// For another backend's report: the engine's line where a docker client is installed; nothing
// where none is.
std::optional<DoctorCheck> docker_availability();

}  // namespace sagebuild::backend
