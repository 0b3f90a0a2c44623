// sagebuild build --env current: the active interpreter, its torch and the CUDA toolkit found
// (nvcc on PATH, $CUDA_HOME/bin, /usr/local/cuda/bin) become one matrix entry, built by the same
// pipeline as every other entry (entry_build.h): the interpreter is its existing environment,
// the toolkit its --cuda-path. The entry is the matrix entry of this Python, torch and CUDA when
// matrix.yaml has one (its id, architectures and wheel name), else "current".
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "backend/build_options.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "util/expected.h"

namespace sagebuild::backend {

struct CurrentEnvironment {
  matrix::Entry entry;
  std::filesystem::path python;     // the interpreter, absolute
  std::filesystem::path cuda_root;  // the toolkit nvcc belongs to
  std::string warning;              // for the user, when the entry's archs were overridden
};

// Errors are for an unusable environment (no interpreter, no torch, no nvcc, mismatched CUDA).
// `arch_list`: "" = $TORCH_CUDA_ARCH_LIST, else the matrix entry's or default_archs.
Expected<CurrentEnvironment> probe_current_environment(const matrix::Matrix& m,
                                                       const std::filesystem::path& python,
                                                       const std::string& arch_list,
                                                       const std::string& package_version);

// The options under which the entry builds: the interpreter as its environment, the toolkit as
// its CUDA path.
void use_current_environment(const CurrentEnvironment& current, BuildOptions& options);

}  // namespace sagebuild::backend
