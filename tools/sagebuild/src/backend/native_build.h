// sagebuild build --env current: one wheel for the active interpreter, its torch and the CUDA
// toolkit found, named by the convention, with provenance, verified, then moved into dist/.
// Flow: find environment -> build (package.build_command) -> repack -> verify -> move -> report.
// Nothing reaches dist/ unless every step succeeded.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "matrix/model.h"
#include "util/expected.h"
#include "vcs/git.h"

namespace sagebuild::backend {

struct CurrentBuildOptions {
  std::filesystem::path root;        // directory of matrix.yaml
  std::string package_version;       // what the wheel is called (vcs::resolve_version)
  std::optional<vcs::GitState> git;  // for provenance; nullopt outside a checkout
  // ZIP timestamps and $SOURCE_DATE_EPOCH of the build: the commit's time, so that two builds
  // of one commit agree.
  std::int64_t source_date_epoch = 315532800;
  std::filesystem::path python = "python3";
  std::filesystem::path dist = "dist";  // relative to root unless absolute
  std::string arch_list;                // "" = TORCH_CUDA_ARCH_LIST, else the matrix entry's
  // A second build for --check-reproducible: its own work directory, no results file.
  bool reproducibility_run = false;
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
