// Finding the interpreter of a Python version (major.minor) on this machine.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "matrix/model.h"
#include "util/expected.h"

namespace sagebuild::toolchain {

// pythonX.Y: matrix.yaml's toolchains.python first (an error when that path is not an interpreter
// of X.Y), then the newest pyenv installation of X.Y ($PYENV_ROOT or ~/.pyenv), then PATH (not
// pyenv's shims, which run only the active version). The error says where it looked.
Expected<std::filesystem::path> find_python(std::string_view version,
                                            const matrix::Toolchains& configured = {});

// The X.Y an interpreter reports, or nullopt when it does not run.
std::optional<std::string> python_version(const std::filesystem::path& python);

// "~/x" -> $HOME/x; other paths as they are.
std::filesystem::path expand_home(std::string_view path);

}  // namespace sagebuild::toolchain
