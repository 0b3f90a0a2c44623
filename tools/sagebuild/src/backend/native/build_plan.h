// --dry-run's plan: for each entry, the interpreter, environment, toolkit and kernel cache entry
// the build would use, and the exact build command and environment (with the parallelism the
// build would use), found as the build finds them (entry_toolchain.h) but without building,
// installing or provisioning anything.
#pragma once

#include <string>
#include <vector>

#include "backend/build_options.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "util/log.h"

namespace sagebuild::backend {

// An entry this machine cannot build, and why.
struct Unavailable {
  std::string id;
  std::string reason;
};

// Prints the plan; returns the entries this machine cannot build.
std::vector<Unavailable> describe_entries(const matrix::Matrix& m,
                                          const std::vector<matrix::Entry>& entries,
                                          const BuildOptions& options, Log& log);

}  // namespace sagebuild::backend
