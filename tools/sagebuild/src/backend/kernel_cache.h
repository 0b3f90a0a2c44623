// The kernel cache: kernels/ compiled once per (kernel sources, CUDA release and nvcc build, host
// compiler, arch list, CMake settings) into an install tree that every wheel build sharing those
// inputs links (SAGEATTN_KERNELS_PREBUILT), instead of recompiling the kernels per wheel.
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

#include "toolchain/cuda.h"
#include "util/expected.h"

namespace sagebuild::backend {

struct KernelInputs {
  std::filesystem::path root;  // the repository (kernels/ and the top-level CMakeLists.txt)
  toolchain::CudaToolkitPath cuda;
  std::vector<std::string> archs;    // TORCH_CUDA_ARCH_LIST spelling
  std::vector<std::string> defines;  // extra -D settings (SAGEATTN_* from SKBUILD_CMAKE_DEFINE)
};

// The inputs as JSON (what key.json holds) and their digest. Fails when a source is unreadable.
struct KernelKey {
  std::string name;  // cuda13.0-<16 hex digits>
  std::string json;  // canonical inputs
};
Expected<KernelKey> kernel_key(const KernelInputs& inputs);

struct KernelBuildOptions {
  std::filesystem::path cache;    // the cache root; empty: no cache (build into `scratch`)
  std::filesystem::path scratch;  // the entry's own directory, for builds without a cache
  int parallel = 1;               // compile jobs
  int nvcc_threads = 1;           // nvcc --threads (architectures of one file in parallel)
  std::filesystem::path log;
  std::function<void(const std::string&)> note;
};

struct KernelLibrary {
  std::filesystem::path prefix;  // give to -DSAGEATTN_KERNELS_PREBUILT
  std::string key;
  bool cache_hit = false;
};

// `key` is kernel_key(inputs), which the caller has already made.
Expected<KernelLibrary> kernel_library(const KernelInputs& inputs, const KernelKey& key,
                                       const KernelBuildOptions& options);

// The binding cache: python/csrc compiled once per (binding sources, kernel library (whose key
// covers the compilers), torch release) into
// <cache>/bindings/torch2.11.0-<key>/prefix/sageattention/_kernels.so. The binding has no Python
// headers in it (torch.ops.load_library loads it), so every Python of one torch release shares it
// and their wheels only package it (SAGEATTN_BINDING_PREBUILT).
struct BindingInputs {
  std::filesystem::path root;
  std::filesystem::path python;     // an interpreter of the environment (finds torch)
  std::string torch_version;        // as installed: "2.11.0+cu130"
  std::filesystem::path kernels;    // KernelLibrary::prefix
  std::string kernels_key;          // KernelLibrary::key
  std::filesystem::path cuda_root;  // the toolkit (headers for the binding)
  std::vector<std::string> defines;
};

struct BindingLibrary {
  std::filesystem::path library;  // give to -DSAGEATTN_BINDING_PREBUILT
  std::string key;
  bool cache_hit = false;
};

Expected<BindingLibrary> binding_library(const BindingInputs& inputs,
                                         const KernelBuildOptions& options);

// The sources that decide the kernel library, relative to the repository root, sorted.
std::vector<std::filesystem::path> kernel_sources(const std::filesystem::path& root);

}  // namespace sagebuild::backend
