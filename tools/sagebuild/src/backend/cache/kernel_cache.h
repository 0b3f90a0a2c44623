// The kernel cache: the package's kernels (matrix.yaml package.kernels) compiled once per
// (their declared sources and the checkout's path, CUDA release and nvcc build, host compiler,
// arch list, CMake settings) into an install tree that every wheel build sharing those inputs links
// (through the declared handoff variable), instead of recompiling the kernels per wheel.
//
//   <cache>/kernels/cuda13.0-<key>/prefix/   lib/libsageattn.a, include/, lib/cmake/sageattn/
//   <cache>/kernels/cuda13.0-<key>/key.json  the inputs the key was made from
//
// An entry is built in a staging directory and renamed into place under a lock file: two
// sagebuild runs (or two entries of one run) that need the same key build it once, and an
// interrupted build leaves no entry behind.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "matrix/model.h"
#include "platform/process.h"
#include "toolchain/cuda.h"
#include "util/expected.h"

namespace sagebuild::backend {

struct KernelInputs {
  std::filesystem::path root;  // the repository: the CMake project and the declared sources
  matrix::NativePart part;     // package.kernels
  toolchain::CudaToolkitPath cuda;
  std::vector<std::string> archs;  // TORCH_CUDA_ARCH_LIST spelling
  // The user's SKBUILD_CMAKE_DEFINE settings that part.user_settings names: NAME=VALUE.
  std::vector<std::string> user_settings;
};

// NAME=VALUE settings of SKBUILD_CMAKE_DEFINE (';'-separated) whose name matches `glob`.
std::vector<std::string> user_settings_from_environment(const std::string& glob);

// A part's CMake settings with {archs}, {abi} and {torch} filled in, as NAME=VALUE.
std::vector<std::string> part_settings(
    const matrix::NativePart& part, const std::vector<std::pair<std::string, std::string>>& values);

// The inputs as JSON (what key.json holds) and their digest. Fails when a source is unreadable.
struct CacheKey {
  std::string name;  // cuda13.0-<16 hex digits> (kernels), torch2.11.0-<...> (a binding)
  std::string json;  // canonical inputs
};
Expected<CacheKey> kernel_key(const KernelInputs& inputs);

struct KernelBuildOptions {
  std::filesystem::path cache;     // the cache root; empty: no cache (build into `scratch`)
  std::filesystem::path scratch;   // the entry's own directory, for builds without a cache
  int parallel = 1;                // compile jobs
  int nvcc_threads = 1;            // nvcc --threads (architectures of one file in parallel)
  platform::LogLines log;          // each step's command and output
  std::filesystem::path log_path;  // the log those lines reach, named in messages
  std::function<void(const std::string&)> note;
  // ccache or sccache for the compilers (build_steps.h: compiler_launcher), or "" for none.
  std::string launcher;
  // Set for every compile on top of sagebuild's own environment (the launcher's statistics log:
  // compile_cache.h).
  std::vector<std::pair<std::string, std::string>> environment = {};
};

struct KernelLibrary {
  std::filesystem::path prefix;  // give to -DSAGEATTN_KERNELS_PREBUILT
  std::string key;
  bool cache_hit = false;
};

// `key` is kernel_key(inputs), which the caller has already made.
Expected<KernelLibrary> kernel_library(const KernelInputs& inputs, const CacheKey& key,
                                       const KernelBuildOptions& options);

// The binding cache: the package's torch binding (package.binding) compiled once per (binding
// sources, kernel library (whose key covers the compilers), torch release, ABI) into
// <cache>/bindings/<torch2.11.0|stable-torch2.10.0>-<key>/prefix/<library>. The binding has no
// Python headers in it (torch.ops.load_library loads it), so every Python of one torch release
// shares it (and every torch from the target on, for the stable ABI): their wheels only package
// it (through the declared handoff variable).
struct BindingInputs {
  std::filesystem::path root;
  matrix::NativePart part;       // package.binding
  std::string kernels_handoff;   // package.kernels.handoff: how the binding finds them
  std::filesystem::path python;  // an interpreter of the environment (finds torch)
  std::string torch_version;     // as installed: "2.11.0+cu130"
  matrix::Abi abi = matrix::Abi::per_torch;
  std::filesystem::path kernels;      // KernelLibrary::prefix
  std::string kernels_key;            // KernelLibrary::key
  std::filesystem::path cuda_root;    // the toolkit (headers for the binding)
  std::vector<std::string> settings;  // the part's CMake settings, filled in, and the user's
  std::vector<std::pair<std::string, std::string>> environment;  // package.build_environment
};

struct BindingLibrary {
  std::filesystem::path library;  // give to the binding's handoff variable
  std::string key;
  bool cache_hit = false;
};

// The binding's key (torch2.11.0-<16 hex digits>, stable-torch2.10.0-...) and its inputs, made
// however the binding is built: the provenance records it either way.
Expected<CacheKey> binding_key(const BindingInputs& inputs);

// `key` is binding_key(inputs).
Expected<BindingLibrary> binding_library(const BindingInputs& inputs, const CacheKey& key,
                                         const KernelBuildOptions& options);

// The files that decide a part (its sources less its exclusions), relative to the repository
// root, '/'-separated, sorted.
std::vector<std::string> part_sources(const std::filesystem::path& root,
                                      const matrix::NativePart& part);

}  // namespace sagebuild::backend
