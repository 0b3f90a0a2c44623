// sagebuild build --backend docker: the selected entries built by `docker buildx bake` from the
// generated Bake file (docker/Dockerfile.linux), one target per entry. Inside each container
// sagebuild builds itself and runs the native backend for that entry (`build --entry ID`), so
// both backends share one code path: environment, kernel cache (a BuildKit cache mount),
// naming, provenance, verification with the import test. Each target exports its wheel into
// build/sagebuild/docker-out/<entry>/; on the host the wheel is verified once more (no import
// test: the host need not have the entry's Python) and moved into dist/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backend/build_options.h"
#include "backend/build_results.h"
#include "backend/status.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "util/log.h"

namespace sagebuild::backend {

std::vector<EntryResult> build_entries_docker(const matrix::Matrix& m,
                                              const std::vector<matrix::Entry>& entries,
                                              const BuildOptions& options, Status& status,
                                              Log& log);

// Why each entry cannot start its Docker build on this engine, by id (ready entries absent): no
// image rule for its toolkit, or an image of the local kind (made by scripts/docker-engine.sh,
// pulled from nowhere) that the engine lacks, with the command that makes it. Images of other
// names are pulled by the build and are not looked for.
std::map<std::string, std::string> docker_entry_problems(const matrix::Matrix& m,
                                                         const std::vector<matrix::Entry>& entries,
                                                         const BuildOptions& options);

// --dry-run: the Bake file that would be written, the exact command and each entry's image.
// Returns why the plan cannot be made (an entry the image set cannot build), else "".
// --docker-sagebuild's file as a path in the build context `root` (the repository),
// '/'-separated; an error when it lies outside it or in a top-level folder .dockerignore leaves
// out (build/, dist/), which the targets could not copy.
Expected<std::string> path_in_context(const std::filesystem::path& root,
                                      const std::filesystem::path& file);

std::string describe_docker(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                            const BuildOptions& options, Log& log);

}  // namespace sagebuild::backend
