// Finding (or provisioning) the CUDA toolkit of a matrix entry's CUDA version.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "matrix/model.h"
#include "util/expected.h"

namespace sagebuild::toolchain {

struct CudaToolkitPath {
  std::filesystem::path root;  // has bin/nvcc, include/, lib/ or lib64/
  std::filesystem::path nvcc;
  Version release;      // 13.0: what the entry names
  std::string version;  // 13.0.88: nvcc's own
  std::string origin;   // where it came from, for the log: "/usr/local/cuda-13.0", "PyPI: ..."
};

// The nvcc of a toolkit root, and its version ("release 13.0, V13.0.88").
Expected<CudaToolkitPath> inspect_toolkit(const std::filesystem::path& root);

// `--cuda-path X.Y=pypi`: the toolkit provisioned from matrix.yaml's `pypi` requirement (the
// one a container build installs), even where the machine has a CUDA X.Y of its own.
inline constexpr const char* kPypiToolkit = "pypi";
// The option's help, for every command that takes it.
inline constexpr const char* kCudaPathHelp =
    "X.Y=DIR: the CUDA X.Y toolkit is in DIR; X.Y=pypi: the one matrix.yaml provisions from PyPI "
    "(as a container build does), even where this machine has its own; repeatable";

struct CudaSearch {
  // --cuda-path X.Y=DIR (or X.Y=pypi), then matrix.yaml's toolchains.cuda: a wrong version there
  // is an error.
  std::vector<std::pair<Version, std::filesystem::path>> given;
  matrix::Toolchains configured;
  // The build cache, where provisioned toolkits live (store::CacheKind::cuda); empty: no
  // provisioning.
  std::filesystem::path cache;
  // An interpreter whose pip installs the toolkit wheels.
  std::filesystem::path python = "python3";
  bool provision = true;  // false (--dry-run): say what would be provisioned, install nothing
  std::function<void(const std::string&)> note;  // progress lines ("provisioning CUDA 13.0 ...")
};

// The toolkit of `cuda` (a matrix.yaml toolkit): given or configured paths, $CUDA_HOME,
// $CUDA_PATH, /usr/local/cuda-X.Y, /usr/local/cuda and nvcc on PATH when their nvcc is X.Y, a
// toolkit provisioned before, else provisioned now from PyPI with the toolkit's `pypi`
// requirement. The error lists every place looked at and what was there.
Expected<CudaToolkitPath> find_cuda(const matrix::CudaToolkit& cuda, const CudaSearch& search);

}  // namespace sagebuild::toolchain
