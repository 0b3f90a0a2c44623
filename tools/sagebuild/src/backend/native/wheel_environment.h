// The environment the wheel build (package.build_command) runs in: the toolkit, the archs, the
// prebuilt parts it links (kernels, binding), matrix.yaml's package.build_environment with its
// {placeholders} filled in. One definition for the build and for --dry-run's plan.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "backend/build_options.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "toolchain/cuda.h"

namespace sagebuild::backend {

using Settings = std::vector<std::pair<std::string, std::string>>;

// What {placeholders} in package.build_environment and the parts' cmake settings stand for:
// {archs}, {abi}, {torch}, {torch_requirement}, {glibc_floor}.
Settings placeholder_values(const matrix::Entry& e);

// package.build_environment for this entry.
Settings package_environment(const matrix::Matrix& m, const matrix::Entry& e);

// package.binding's cmake settings for this entry, and the user's (its user_settings glob).
std::vector<std::string> binding_settings(const matrix::Matrix& m, const matrix::Entry& e);

// The prebuilt parts the wheel build links: empty paths when a part is not declared (or, for
// the binding, compiled by the wheel build itself).
struct Prebuilt {
  std::filesystem::path kernels;
  std::filesystem::path binding;
};

// What the wheel build runs with on top of sagebuild's own environment.
Settings wheel_build_environment(const matrix::Matrix& m, const matrix::Entry& e,
                                 const BuildOptions& o, const toolchain::CudaToolkitPath& toolkit,
                                 const Prebuilt& prebuilt, const std::filesystem::path& work,
                                 int parallel);

}  // namespace sagebuild::backend
