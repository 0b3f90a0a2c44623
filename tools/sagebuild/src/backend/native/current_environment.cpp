#include "backend/native/current_environment.h"

#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "platform/process.h"
#include "toolchain/cuda.h"
#include "util/text.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;

std::optional<stdfs::path> find_nvcc() {
  if (auto p = platform::find_in_path("nvcc")) return p;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(var); home && *home) {
      const stdfs::path candidate = stdfs::path(home) / "bin" / "nvcc";
      if (stdfs::exists(candidate)) return candidate;
    }
  }
  if (stdfs::exists("/usr/local/cuda/bin/nvcc")) return stdfs::path("/usr/local/cuda/bin/nvcc");
  return std::nullopt;
}

struct Probed {
  Version python, torch;
  std::string torch_cuda;  // torch.version.cuda
  toolchain::CudaToolkitPath toolkit;
};

Expected<Probed> probe(const stdfs::path& python) {
  auto py = platform::run_process(
      {python.string(), "-c",
       "import sys; print('%d.%d' % sys.version_info[:2]); import torch; "
       "print(torch.__version__.split('+')[0]); print(torch.version.cuda or '')"},
      {.timeout = std::chrono::minutes(2)});
  if (!py) return py.error();
  const auto lines = text::split(text::trim(py->output), '\n');
  if (!py->ok() || lines.size() < 3) {
    return Error{
        fmt::format("{} cannot import torch ({}); install the torch to build against "
                    "into that environment, or pass --python",
                    python.string(), py->last_line())};
  }
  auto pv = Version::parse(text::trim(lines[0]));
  auto tv = Version::parse(text::trim(lines[1]));
  if (!pv || !tv) return Error{fmt::format("cannot read the versions {} reports", python.string())};
  Probed p{*pv, *tv, std::string(text::trim(lines[2])), {}};
  if (p.torch_cuda.empty()) {
    return Error{fmt::format("{}'s torch {} is a CPU-only build; a CUDA build of torch is needed",
                             python.string(), p.torch.str())};
  }
  const auto nvcc = find_nvcc();
  if (!nvcc) {
    return Error{"no CUDA toolkit: nvcc is not in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin"};
  }
  auto toolkit = toolchain::inspect_toolkit(nvcc->parent_path().parent_path());
  if (!toolkit) return Error{fmt::format("cannot read the version of {}", nvcc->string())};
  p.toolkit = *toolkit;
  const auto torch_cuda = Version::parse(p.torch_cuda);
  if (!torch_cuda || torch_cuda->major() != toolkit->release.major()) {
    return Error{
        fmt::format("nvcc {} ({}) does not match torch {}'s CUDA {}: the CUDA major versions "
                    "must agree; put the matching toolkit's bin/ first in PATH",
                    toolkit->version, nvcc->string(), p.torch.str(), p.torch_cuda)};
  }
  return p;
}

// The per-torch matrix entry of this Python, torch and CUDA on Linux, if a profile has one.
std::optional<matrix::Entry> declared_entry(const matrix::Matrix& m, const Probed& p,
                                            const std::string& version) {
  for (auto& e : matrix::expand_all_profiles(m, {version, "linux"})) {
    if (e.abi == matrix::Abi::per_torch && e.torch == p.torch && e.cuda == p.toolkit.release &&
        e.python == p.python) {
      return std::move(e);
    }
  }
  return std::nullopt;
}

}  // namespace

Expected<CurrentEnvironment> probe_current_environment(const matrix::Matrix& m,
                                                       const stdfs::path& python_given,
                                                       const std::string& arch_list,
                                                       const std::string& package_version) {
  // A relative interpreter path means "from here"; the build itself runs in the root.
  stdfs::path python = python_given;
  if (python.has_parent_path() && python.is_relative()) python = stdfs::absolute(python);
  auto p = probe(python);
  if (!p) return p.error();
  CurrentEnvironment current;
  current.python = python;
  current.cuda_root = p->toolkit.root;
  std::optional<matrix::Entry> declared = declared_entry(m, *p, package_version);
  std::vector<std::string> archs;
  if (!arch_list.empty()) {
    archs = text::split(arch_list, ';');
  } else if (const char* list = std::getenv("TORCH_CUDA_ARCH_LIST"); list && *list) {
    archs = text::split(list, ';');
  } else if (declared) {
    archs = declared->archs;
  } else {
    for (const auto& a : m.default_archs) {
      const matrix::ArchSpec* spec = m.find_arch(a.value);
      if (spec && spec->cuda.allows(p->toolkit.release)) archs.push_back(a.value);
    }
  }
  if (archs.empty()) return Error{"no CUDA architecture to build for (matrix.yaml default_archs)"};
  if (declared) {
    if (declared->archs != archs) {
      // The wheel will carry the entry's name but not its architectures: verify-wheel checks
      // wheels against matrix.yaml by name, so it will (rightly) fail it there.
      current.warning = fmt::format(
          "building {} for {} instead of its matrix.yaml archs {}; verify-wheel against "
          "matrix.yaml will report the missing ones (B004)",
          declared->id, text::join(archs, ";"), declared->arch_list());
    }
    current.entry = *declared;
    current.entry.archs = archs;
    current.entry.cuda_full = p->toolkit.version;
    return current;
  }
  const matrix::Platform* linux = nullptr;
  for (const auto& platform : m.platforms) {
    if (platform.os == "linux" && !linux) linux = &platform;
  }
  if (!linux) return Error{"matrix.yaml declares no Linux platform to name the wheel for"};
  current.entry = matrix::make_entry(m,
                                     {linux, p->torch, p->toolkit.release, p->toolkit.version,
                                      p->python, matrix::Abi::per_torch, archs},
                                     package_version);
  current.entry.id = "current";
  return current;
}

void use_current_environment(const CurrentEnvironment& current, BuildOptions& options) {
  options.torch.existing.insert(options.torch.existing.begin(), current.python);
  options.cuda_paths.insert(options.cuda_paths.begin(), {current.entry.cuda, current.cuda_root});
}

}  // namespace sagebuild::backend
