// The Python environment a matrix entry builds in: the entry's interpreter, its torch release and
// the package's build requirements, made once in the cache and reused by every later build.
//
// Layout under the cache directory:
//   envs/cp312-torch2.11.0-<digest>/   a venv: torch (without its dependencies), the pure and
//                                      small dependencies, build_requires
//   torch-runtime/<digest>/            torch's CUDA runtime wheels (nvidia-*, cuda-toolkit):
//                                      2.7 GB that every Python of that torch shares, reached
//                                      through a .pth file in each venv
// triton is left out: neither building nor importing the package needs torch's compiler.
// Each is made in a staging directory and renamed into place, under a lock, so that an
// interrupted or concurrent run never sees a half-made one.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "platform/process.h"
#include "util/expected.h"
#include "util/version.h"

namespace sagebuild::toolchain {

struct TorchSource {
  std::string index_url;   // pip --index-url for torch; empty: pip's own configuration
  std::string find_links;  // pip --find-links (a directory or URL of wheels)
  // Interpreters whose environments already have torch: an entry of the same Python and torch
  // builds there as it is (the GPU machine, a prepared CI image).
  std::vector<std::filesystem::path> existing;
};

struct EnvironmentRequest {
  std::filesystem::path base_python;  // the entry's interpreter (find_python)
  Version python;                     // 3.12
  Version torch;                      // 2.11.0
  std::vector<std::string> build_requires;
  TorchSource source;
  std::filesystem::path cache;  // the cache root
  platform::LogLines log;       // pip's commands and output
  std::function<void(const std::string&)> note;
};

struct BuildEnvironment {
  std::filesystem::path python;  // run the build with this interpreter
  std::string torch_version;     // as installed: "2.11.0+cu130"
  std::string torch_cuda;        // torch.version.cuda: "13.0"
  bool reused = false;
  std::string origin;  // for the log: "cache envs/cp312-torch2.11.0-…", "--python-env …"
};

Expected<BuildEnvironment> prepare_environment(const EnvironmentRequest& request);

// The torch-runtime/<digest> directory a cached venv reaches through its .pth file, if any: the
// venv needs it, so `sagebuild cache prune` never removes the one without the other.
std::optional<std::filesystem::path> shared_runtime_of(const std::filesystem::path& venv);

// What torch reports of itself in an environment: version, CUDA, C++ ABI.
Expected<BuildEnvironment> probe_torch(const std::filesystem::path& python,
                                       const platform::LogLines& log = {});

}  // namespace sagebuild::toolchain
