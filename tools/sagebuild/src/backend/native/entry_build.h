// sagebuild build: matrix entries built natively into verified wheels in dist/. Every build
// takes this path, whatever selected its entries: --profile, --entry, and --env current (whose
// entry is this environment: current_environment.h). Per entry, one function per phase:
//   toolchain    the entry's Python and CUDA toolkit: found (an existing environment's
//                interpreter first), or provisioned (toolchain/cuda.h); first, as it fails fast
//   environment  a venv of that Python with the entry's torch (toolchain/environment.h), made
//                once in the cache, or the existing environment given for it
//   inputs       what decides the wheel; a wheel in dist/ built from the same is up to date
//   kernels      package.kernels from the kernel cache, compiled on a miss (kernel_cache.h)
//   binding      package.binding from the binding cache, compiled on a miss
//   wheel        package.build_command in the environment, linking what the cache holds
//   verify       renamed, provenance recorded, every verify-wheel check incl. an import in a
//                fresh venv, then moved into dist/ (wheel_finish.h)
// Entries run in parallel (--jobs); a failed or interrupted entry leaves nothing in dist/.
// build/results/<id>.json records each outcome (build_results.h).
#pragma once

#include <vector>

#include "backend/build_options.h"
#include "backend/build_results.h"
#include "backend/status.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "util/log.h"

namespace sagebuild::backend {

std::vector<EntryResult> build_entries(const matrix::Matrix& m,
                                       const std::vector<matrix::Entry>& entries,
                                       const BuildOptions& options, Status& status, Log& log);

// The compile budget a build of these entries gets (build_options.h's plan_budget, with this
// machine's cores and memory and the package's kernel sources).
BuildBudget budget_for(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions& options);

}  // namespace sagebuild::backend
