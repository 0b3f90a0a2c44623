// Small pieces that every build backend uses.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

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

// ccache or sccache when one is on PATH: the C++ compiler launcher for the binding; "" else.
std::string compiler_launcher();

}  // namespace sagebuild::backend
