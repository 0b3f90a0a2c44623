// sagebuild build --env current: one wheel for the active interpreter, its torch and the CUDA
// toolkit found, named by the convention, with provenance, verified, then moved into dist/.
// Flow: find environment -> build (package.build_command) -> repack -> verify -> move -> report.
// Nothing reaches dist/ unless every step succeeded.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "matrix/model.h"
#include "util/expected.h"

namespace sagebuild::backend {

struct CurrentBuildOptions {
  std::filesystem::path root;  // directory of matrix.yaml
  std::string package_version;
  std::filesystem::path python = "python3";
  std::filesystem::path dist = "dist";  // relative to root unless absolute
  std::string arch_list;                // "" = TORCH_CUDA_ARCH_LIST, else the matrix entry's
};

enum class BuildOutcome { built, build_failed, verification_failed };

struct BuildResult {
  BuildOutcome outcome = BuildOutcome::build_failed;
  std::string message;          // what went wrong, when it did
  std::filesystem::path wheel;  // in dist/, when built
  std::filesystem::path log;
};

// Errors are for an unusable environment (no interpreter, no torch, no nvcc, mismatched CUDA).
Expected<BuildResult> build_current(const matrix::Matrix& m, const CurrentBuildOptions& options,
                                    std::ostream& out);

}  // namespace sagebuild::backend
