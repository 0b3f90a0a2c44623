// sagebuild build --backend docker: the selected entries built by `docker buildx bake` from the
// generated Bake file (docker/Dockerfile.linux), one target per entry. Inside each container
// sagebuild builds itself and runs the native backend for that entry (`build --entry ID`), so
// both backends share one code path: environment, kernel cache (a BuildKit cache mount),
// naming, provenance, verification with the import test. Each target exports its wheel into
// build/sagebuild/docker-out/<entry>/; on the host the wheel is verified once more (no import
// test: the host need not have the entry's Python) and moved into dist/.
#pragma once

#include <ostream>
#include <vector>

#include "backend/build_options.h"
#include "backend/build_results.h"
#include "backend/progress.h"
#include "matrix/expand.h"
#include "matrix/model.h"

namespace sagebuild::backend {

std::vector<EntryResult> build_entries_docker(const matrix::Matrix& m,
                                              const std::vector<matrix::Entry>& entries,
                                              const BuildOptions& options, Progress& progress,
                                              std::ostream& out);

// --dry-run: the Bake file that would be written and the exact command.
void describe_docker(const std::vector<matrix::Entry>& entries, const BuildOptions& options,
                     std::ostream& out);

}  // namespace sagebuild::backend
