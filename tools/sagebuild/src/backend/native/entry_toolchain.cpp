#include "backend/native/entry_toolchain.h"

#include <algorithm>

#include <fmt/format.h>

#include "toolchain/python.h"

namespace sagebuild::backend {

std::vector<Version> candidate_pythons(const matrix::Matrix& m, const matrix::Entry& e) {
  std::vector<Version> out = {e.python};
  if (!matrix::every_python(e.abi)) return out;
  for (const auto& release : m.torch) {
    if (release.version != e.torch) continue;
    std::vector<Version> others;
    for (const auto& p : release.python) {
      if (p.value != e.python) others.push_back(p.value);
    }
    std::sort(others.begin(), others.end(), [](const auto& a, const auto& b) { return a > b; });
    out.insert(out.end(), others.begin(), others.end());
  }
  return out;
}

Expected<EntryPython> find_entry_python(const matrix::Matrix& m, const matrix::Entry& e,
                                        const BuildOptions& o) {
  const std::vector<Version> candidates = candidate_pythons(m, e);
  for (const Version& python : candidates) {
    for (const std::filesystem::path& existing : o.torch.existing) {
      if (toolchain::python_version(existing) == python.str())
        return EntryPython{existing, python, true};
    }
  }
  std::string first_error;
  for (const Version& python : candidates) {
    auto found = toolchain::find_python(python.str(), m.toolchains);
    if (found) return EntryPython{*found, python, false};
    if (first_error.empty()) first_error = found.error().message;
  }
  return Error{first_error};
}

bool toolkit_declared(const matrix::Matrix& m, const matrix::Entry& e, const BuildOptions& o) {
  return m.find_cuda(e.cuda) || std::any_of(o.cuda_paths.begin(), o.cuda_paths.end(),
                                            [&](const auto& p) { return p.first == e.cuda; });
}

Expected<toolchain::CudaToolkitPath> find_entry_toolkit(
    const matrix::Matrix& m, const matrix::Entry& e, const BuildOptions& o,
    const std::filesystem::path& python, bool provision,
    const std::function<void(const std::string&)>& note) {
  if (!toolkit_declared(m, e, o)) {
    return Error{fmt::format("CUDA {} is not in matrix.yaml", e.cuda.str())};
  }
  const matrix::CudaToolkit* declared = m.find_cuda(e.cuda);
  const matrix::CudaToolkit given{e.cuda, e.cuda_full, std::nullopt, "", {}};
  const toolchain::CudaSearch search{o.cuda_paths, m.toolchains, o.cache, python, provision, note};
  return toolchain::find_cuda(declared ? *declared : given, search);
}

}  // namespace sagebuild::backend
