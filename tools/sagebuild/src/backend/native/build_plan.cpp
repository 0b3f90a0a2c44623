#include "backend/native/build_plan.h"

#include <fmt/format.h>

#include "backend/build_steps.h"
#include "backend/cache/kernel_cache.h"
#include "backend/native/entry_build.h"
#include "backend/native/entry_toolchain.h"
#include "backend/native/wheel_environment.h"
#include "backend/wheel_finish.h"
#include "store/build_cache.h"
#include "util/secrets.h"
#include "util/text.h"

namespace sagebuild::backend {

namespace stdfs = std::filesystem;

std::vector<Unavailable> describe_entries(const matrix::Matrix& m,
                                          const std::vector<matrix::Entry>& entries,
                                          const BuildOptions& o, Log& log) {
  const BuildBudget budget = budget_for(m, entries, o);
  const store::BuildCache cache(o.cache);
  log.result("sagebuild: {}\n", budget.why);
  std::vector<Unavailable> unavailable;
  auto missing = [&](const matrix::Entry& e, const std::string& why) {
    if (unavailable.empty() || unavailable.back().id != e.id) unavailable.push_back({e.id, why});
  };
  for (const matrix::Entry& e : entries) {
    log.result("{}\n", e.id);
    log.result("  wheel        {}\n", identity_of(e).file_name);
    const auto python = find_entry_python(m, e, o);
    // A stable-ABI entry builds with the newest of its torch's Pythons found here: the plan
    // names the one the build would take, as the wheel's provenance will.
    const Version builds_with = python ? python->version : e.python;
    log.result("  python       {}\n",
               python ? fmt::format("{} ({})", python->version.str(), python->python.string())
                      : "MISSING: " + python.error().message);
    if (!python) missing(e, python.error().message);
    log.result(
        "  environment  {}: torch=={} from {}{}\n",
        cache
            .path(store::CacheKind::envs, fmt::format("cp{}{}-torch{}-*", builds_with.major(),
                                                      builds_with.minor(), e.torch.str()))
            .string(),
        e.torch.str(), o.torch.index_url.empty() ? "pip's index" : redact_url(o.torch.index_url),
        o.torch.find_links.empty() ? "" : " + --find-links " + o.torch.find_links);
    if (!toolkit_declared(m, e, o)) {
      missing(e, fmt::format("CUDA {} is not in matrix.yaml", e.cuda.str()));
      continue;
    }
    const auto toolkit =
        find_entry_toolkit(m, e, o, python ? python->python : stdfs::path("python3"), false);
    Prebuilt prebuilt;
    toolchain::CudaToolkitPath shown;
    if (toolkit) {
      shown = *toolkit;
      log.result("  toolkit      CUDA {}: {}\n", toolkit->version, toolkit->origin);
      if (m.package.kernels) {
        KernelInputs inputs{o.root, *m.package.kernels, *toolkit, e.archs,
                            user_settings_from_environment(m.package.kernels->user_settings)};
        auto key = kernel_key(inputs);
        prebuilt.kernels = o.kernel_cache && key
                               ? cache.path(store::CacheKind::kernels, key->name) / "prefix"
                               : o.root / "build" / "sagebuild" / e.id / "kernels" / "prefix";
        std::error_code ec;
        log.result("  kernels      {} ({})\n", key ? key->name : key.error().message,
                   !o.kernel_cache ? "compiled for this entry (--no-cache)"
                   : stdfs::exists(prebuilt.kernels.parent_path() / "key.json", ec) ? "cached"
                                                                                    : "to compile");
      }
    } else {
      // The plan still shows the commands, with the toolkit's place left open.
      log.result("  toolkit      MISSING: {}\n", toolkit.error().message);
      missing(e, toolkit.error().message);
      shown.root = fmt::format("<CUDA {} toolkit>", e.cuda.str());
      shown.nvcc = shown.root / "bin" / "nvcc";
      if (m.package.kernels) {
        prebuilt.kernels =
            cache.path(store::CacheKind::kernels, fmt::format("cuda{}-<key>", e.cuda.str())) /
            "prefix";
      }
    }
    const stdfs::path work = o.root / "build" / "sagebuild" / e.id;
    const stdfs::path venv_python =
        cache.path(store::CacheKind::envs, "<environment>") / "bin" / "python";
    log.result("  command      {}\n",
               text::join(build_command_argv(m, o.root, venv_python, work / "backend"), " "));
    if (m.package.binding && o.kernel_cache) {
      prebuilt.binding =
          cache.path(store::CacheKind::bindings, fmt::format("torch{}-<key>", e.torch.str())) /
          "prefix" / m.package.binding->library;
    }
    for (const auto& [name, value] :
         wheel_build_environment(m, e, o, shown, prebuilt, work, budget.parallel)) {
      if (name != "PATH") log.result("    {}={}\n", name, value);
    }
    log.result("\n");
  }
  return unavailable;
}

}  // namespace sagebuild::backend
