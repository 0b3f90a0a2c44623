#include "toolchain/cuda.h"

#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "platform/process.h"
#include "store/build_cache.h"
#include "toolchain/python.h"
#include "util/fs.h"
#include "util/text.h"

namespace sagebuild::toolchain {
namespace {

// A provisioned toolkit's cache entry: cuda/<X.Y>/toolkit.
std::string toolkit_entry(const Version& release) {
  return release.str() + "/toolkit";
}

namespace stdfs = std::filesystem;

bool same_release(const Version& a, const Version& b) {
  return a.major() == b.major() && a.minor() == b.minor();
}

// NVIDIA's wheels lay a toolkit out flat, nvidia/cu13/{bin,include,lib,nvvm}, but the nvcc.profile
// they ship links from $(TOP)/lib64, so nvcc finds no cudart_static or cudadevrt and every link
// (CMake's compiler check first) fails. lib64 -> lib gives it (and CMake's FindCUDAToolkit) the
// installed layout, and an unversioned libcudart.so what FindCUDAToolkit looks for.
void complete_wheel_layout(const stdfs::path& root) {
  std::error_code ec;
  for (const auto& lib : stdfs::directory_iterator(root / "lib", ec)) {
    const std::string name = lib.path().filename().string();
    if (name.starts_with("libcudart.so.") && !stdfs::exists(root / "lib" / "libcudart.so")) {
      stdfs::create_symlink(name, root / "lib" / "libcudart.so", ec);
    }
  }
  if (!stdfs::exists(root / "lib64", ec))
    stdfs::create_directory_symlink("lib", root / "lib64", ec);
}

// Finds the root that has bin/nvcc in a toolkit provisioned from NVIDIA's wheels, and completes
// its layout.
Expected<stdfs::path> provisioned_root(const stdfs::path& dir) {
  // Only the places NVIDIA's layout puts it (not a walk of the whole 270 MB tree).
  std::error_code ec;
  std::vector<stdfs::path> roots = {dir};
  for (const auto& sub : stdfs::directory_iterator(dir / "nvidia", ec))
    roots.push_back(sub.path());
  for (const stdfs::path& root : roots) {
    if (!stdfs::is_regular_file(root / "bin" / "nvcc", ec)) continue;
    complete_wheel_layout(root);
    return root;
  }
  return Error{"no bin/nvcc"};
}

}  // namespace

Expected<CudaToolkitPath> inspect_toolkit(const stdfs::path& root) {
  const stdfs::path nvcc = root / "bin" / "nvcc";
  std::error_code ec;
  if (!stdfs::exists(nvcc, ec)) return Error{"no bin/nvcc"};
  auto r =
      platform::run_process({nvcc.string(), "--version"}, {.timeout = std::chrono::minutes(1)});
  if (!r) return r.error();
  if (!r->ok()) return Error{fmt::format("`nvcc --version` failed: {}", r->last_line())};
  std::smatch m;
  if (!std::regex_search(r->output, m, std::regex(R"(release (\d+\.\d+), V(\d+\.\d+\.\d+))"))) {
    return Error{"`nvcc --version` printed no release"};
  }
  return CudaToolkitPath{root, nvcc, *Version::parse(m[1].str()), m[2].str(), root.string()};
}

Expected<CudaToolkitPath> find_cuda(const matrix::CudaToolkit& cuda, const CudaSearch& search) {
  const Version& want = cuda.version;
  // Where a provisioned toolkit of this release lives in the build cache.
  const store::BuildCache cache(search.cache);
  const stdfs::path slot = cache.path(store::CacheKind::cuda, toolkit_entry(want));
  // 1. Paths the user named: these must be right.
  auto named = [&](const stdfs::path& root, const std::string& who) -> Expected<CudaToolkitPath> {
    auto found = inspect_toolkit(root);
    if (!found) {
      return Error{fmt::format("{} names {} for CUDA {}, which is not a CUDA toolkit ({})", who,
                               root.string(), want.str(), found.error().message)};
    }
    if (!same_release(found->release, want)) {
      return Error{fmt::format("{} names {} for CUDA {}, but its nvcc is {}: wrong nvcc version",
                               who, root.string(), want.str(), found->version)};
    }
    found->origin = root.string() + " (" + who + ")";
    return found;
  };
  bool pypi_only = false;  // --cuda-path X.Y=pypi: the cache's toolkit, else provisioned now
  for (const auto& [v, root] : search.given) {
    if (!same_release(v, want)) continue;
    if (root == kPypiToolkit) {
      pypi_only = true;
      break;
    }
    return named(root, "--cuda-path");
  }
  for (const auto& [v, path] : search.configured.cuda) {
    if (same_release(v, want) && !pypi_only) {
      return named(
          expand_home(path.value),
          fmt::format("{}: toolchains.cuda",
                      fmt::format("matrix.yaml:{}:{}", path.location.line, path.location.column)));
    }
  }

  // 2. The usual places, taken when their nvcc is the right one.
  std::vector<std::string> looked;
  std::vector<std::pair<stdfs::path, std::string>> candidates;
  if (!pypi_only) {
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* home = std::getenv(var); home && *home)
        candidates.push_back({home, "$" + std::string(var)});
    }
    candidates.push_back({fmt::format("/usr/local/cuda-{}", want.str()), ""});
    candidates.push_back({"/usr/local/cuda", ""});
    if (auto nvcc = platform::find_in_path("nvcc")) {
      std::error_code ec;
      const stdfs::path real = stdfs::canonical(*nvcc, ec);
      candidates.push_back({(ec ? *nvcc : real).parent_path().parent_path(), "nvcc on PATH"});
    }
  }
  if (!search.cache.empty()) candidates.push_back({slot, "cache"});
  for (const auto& [root, label] : candidates) {
    const std::string name = label.empty() ? root.string() : label + " " + root.string();
    stdfs::path probe_root = root;
    if (label == "cache") {
      auto provisioned = provisioned_root(root);
      if (!provisioned) {
        looked.push_back(name + ": absent");
        continue;
      }
      probe_root = *provisioned;
    }
    auto found = inspect_toolkit(probe_root);
    if (!found) {
      std::error_code ec;
      looked.push_back(
          fmt::format("{}: {}", name, stdfs::exists(root, ec) ? found.error().message : "absent"));
      continue;
    }
    if (same_release(found->release, want)) {
      found->origin =
          label == "cache" ? fmt::format("{} (provisioned from PyPI)", probe_root.string()) : name;
      return found;
    }
    looked.push_back(fmt::format("{}: nvcc {}", name, found->version));
  }

  // 3. Provision it from PyPI into the cache.
  if (pypi_only && (cuda.pypi.empty() || search.cache.empty())) {
    return Error{fmt::format(
        "--cuda-path {}=pypi: {}", want.str(),
        search.cache.empty()
            ? "provisioning is off (--no-cache)"
            : fmt::format("matrix.yaml gives CUDA {} no `pypi` requirement", want.str()))};
  }
  if (cuda.pypi.empty() || search.cache.empty()) {
    return Error{fmt::format(
        "no CUDA {0} toolkit: {1}; {2}. Install it (/usr/local/cuda-{0}), pass "
        "--cuda-path {0}=DIR, or set toolchains.cuda in matrix.yaml",
        want.str(), text::join(looked, "; "),
        search.cache.empty() ? "provisioning is off (--no-cache)"
                             : fmt::format("matrix.yaml gives CUDA {} no `pypi` requirement to "
                                           "provision it with",
                                           want.str()))};
  }
  if (!search.provision) {
    return Error{
        fmt::format("CUDA {} is not on this machine; it would be provisioned from PyPI "
                    "({}) into {}",
                    want.str(), cuda.pypi, slot.string())};
  }
  auto made = cache.take(
      store::CacheKind::cuda, toolkit_entry(want),
      {"sagebuild-toolkit.json", [&](const stdfs::path& staging) -> Expected<Ok> {
         if (search.note) {
           search.note(fmt::format("provisioning CUDA {} from PyPI: {}", want.str(), cuda.pypi));
         }
         auto installed = platform::run_process(
             {search.python.string(), "-m", "pip", "install", "--quiet", "--no-warn-conflicts",
              "--disable-pip-version-check", "--target", staging.string(), cuda.pypi},
             {.timeout = std::chrono::minutes(30)});
         if (!installed || !installed->ok()) {
           return Error{
               fmt::format("provisioning CUDA {} from PyPI ({}) failed: {}", want.str(), cuda.pypi,
                           installed ? installed->last_line() : installed.error().message)};
         }
         auto root = provisioned_root(staging);
         if (!root) {
           return Error{fmt::format(
               "{} installs no nvcc (bin/nvcc), so CUDA {} cannot be provisioned from PyPI; "
               "install the toolkit or pass --cuda-path {}=DIR",
               cuda.pypi, want.str(), want.str())};
         }
         auto found = inspect_toolkit(*root);
         if (!found || !same_release(found->release, want)) {
           return Error{fmt::format("{} installs nvcc {}, not CUDA {}: wrong nvcc version",
                                    cuda.pypi, found ? found->version : found.error().message,
                                    want.str())};
         }
         return fs::write_file_atomic(staging / "sagebuild-toolkit.json",
                                      fmt::format("{{\"pypi\": \"{}\"}}\n", cuda.pypi));
       }});
  if (!made) return made.error();
  auto root = provisioned_root(made->path);
  if (!root) return root.error();
  auto result = inspect_toolkit(*root);
  if (result) result->origin = fmt::format("{} (provisioned from PyPI)", root->string());
  return result;
}

}  // namespace sagebuild::toolchain
