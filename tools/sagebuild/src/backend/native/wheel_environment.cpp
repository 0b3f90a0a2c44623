#include "backend/native/wheel_environment.h"

#include <cstdlib>

#include "backend/build_steps.h"
#include "backend/cache/kernel_cache.h"
#include "backend/wheel_finish.h"
#include "util/text.h"

namespace sagebuild::backend {

namespace stdfs = std::filesystem;

Settings placeholder_values(const matrix::Entry& e) {
  const wheel::WheelIdentity identity = identity_of(e);
  return {{"archs", e.arch_list()},
          {"abi", matrix::binding_abi_name(e.abi)},
          {"torch", e.torch.str()},
          {"torch_requirement", identity.torch_requirement},
          {"glibc_floor", identity.glibc_floor}};
}

Settings package_environment(const matrix::Matrix& m, const matrix::Entry& e) {
  const Settings values = placeholder_values(e);
  Settings out;
  for (const auto& [name, value] : m.package.build_environment)
    out.emplace_back(name, text::fill_placeholders(value, values));
  return out;
}

std::vector<std::string> binding_settings(const matrix::Matrix& m, const matrix::Entry& e) {
  if (!m.package.binding) return {};
  std::vector<std::string> settings = part_settings(*m.package.binding, placeholder_values(e));
  const auto user = user_settings_from_environment(m.package.binding->user_settings);
  settings.insert(settings.end(), user.begin(), user.end());
  return settings;
}

Settings wheel_build_environment(const matrix::Matrix& m, const matrix::Entry& e,
                                 const BuildOptions& o, const toolchain::CudaToolkitPath& toolkit,
                                 const Prebuilt& prebuilt, const stdfs::path& work, int parallel) {
  std::vector<std::string> defines;
  if (const char* user = std::getenv("SKBUILD_CMAKE_DEFINE"); user && *user) {
    defines.emplace_back(user);
  }
  if (m.package.kernels) {
    defines.push_back(m.package.kernels->handoff + "=" + prebuilt.kernels.string());
  }
  defines.push_back("CUDAToolkit_ROOT=" + toolkit.root.string());
  if (m.package.binding) {
    // Always said, empty when the wheel build compiles the binding itself.
    defines.push_back(m.package.binding->handoff + "=" + prebuilt.binding.string());
  }
  if (!m.package.binding || prebuilt.binding.empty()) {
    // The wheel build compiles the binding: with the binding's own settings (its ABI).
    for (const std::string& setting : binding_settings(m, e))
      defines.push_back(setting);
    if (const std::string launcher = compiler_launcher(o); !launcher.empty()) {
      defines.push_back("CMAKE_CXX_COMPILER_LAUNCHER=" + launcher);
    }
  }
  const char* path = std::getenv("PATH");
  Settings env = {{"TORCH_CUDA_ARCH_LIST", e.arch_list()},
                  {"SOURCE_DATE_EPOCH", std::to_string(o.source_date_epoch)},
                  {"PATH", (toolkit.root / "bin").string() + ":" + (path ? path : "")},
                  {"CUDA_HOME", toolkit.root.string()},
                  {"CUDACXX", toolkit.nvcc.string()},
                  {"SKBUILD_CMAKE_DEFINE", text::join(defines, ";")},
                  {"SKBUILD_BUILD_DIR", (work / "cmake").string()},
                  {"CMAKE_BUILD_PARALLEL_LEVEL", std::to_string(parallel)},
                  {"PIP_NO_INPUT", "1"}};
  const Settings package = package_environment(m, e);
  env.insert(env.end(), package.begin(), package.end());
  return env;
}

}  // namespace sagebuild::backend
