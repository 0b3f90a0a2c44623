// Small pieces that every build backend uses.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "backend/build_options.h"
#include "matrix/model.h"

namespace sagebuild::backend {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// matrix.yaml's package.build_command with {python}, {wheel_dir} and {source_dir} filled in.
std::vector<std::string> build_command_argv(const matrix::Matrix& m,
                                            const std::filesystem::path& root,
                                            const std::filesystem::path& python,
                                            const std::filesystem::path& wheel_dir);

// ccache or sccache when one is on PATH and the build uses a launcher (not
// --check-reproducible's second build): the kernels' and the binding's compiler launcher; ""
// else.
std::string compiler_launcher(const BuildOptions& options);

}  // namespace sagebuild::backend
