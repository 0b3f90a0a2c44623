#include "backend/build_options.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "toolchain/cuda.h"
#include "util/fs.h"

namespace sagebuild::backend {

namespace stdfs = std::filesystem;

Expected<Ok> normalize_build_options(BuildOptions& o,
                                     const std::vector<std::string>& cuda_path_specs) {
  if (o.cache.empty()) o.cache = fs::default_cache_dir();
  o.cache = stdfs::absolute(o.cache);
  for (auto& python : o.torch.existing) {
    if (python.has_parent_path()) python = stdfs::absolute(python);
  }
  if (!o.torch.find_links.empty() && stdfs::exists(o.torch.find_links)) {
    o.torch.find_links = stdfs::absolute(o.torch.find_links).string();
  }
  for (const std::string& spec : cuda_path_specs) {
    const auto eq = spec.find('=');
    auto version = Version::parse(spec.substr(0, eq));
    if (eq == std::string::npos || !version || version->size() != 2) {
      return Error{fmt::format(
          "--cuda-path '{}': expected X.Y=DIR or X.Y=pypi, e.g. 12.8=/opt/cuda-12.8", spec)};
    }
    const std::string dir = spec.substr(eq + 1);
    o.cuda_paths.push_back(
        {*version, dir == toolchain::kPypiToolkit ? stdfs::path(dir) : stdfs::absolute(dir)});
  }
  return Ok{};
}

BuildBudget plan_budget(int requested_jobs, std::size_t entries, unsigned cores, double memory_gb,
                        std::size_t kernel_files, std::size_t archs) {
  BuildBudget b;
  // 1.5 GB per compile process: above nvcc's and g++'s measured peaks on these sources
  // (docs/build.md, "Parallelism and memory"); the margin keeps a busy machine out of swap.
  const int by_memory = std::max(1, static_cast<int>(memory_gb / 1.5));
  const int total = std::max(1, std::min(static_cast<int>(std::max(1u, cores)), by_memory));
  b.jobs = std::max(
      1, std::min<int>(requested_jobs, static_cast<int>(std::max<std::size_t>(1, entries))));
  b.total = total;
  b.parallel = std::max(1, total / b.jobs);
  // nvcc --threads compiles the architectures of one file in parallel: worth it only when the
  // entry's share of processes exceeds the number of kernel files.
  const std::size_t files = std::max<std::size_t>(1, kernel_files);
  b.nvcc_threads = static_cast<int>(std::clamp<std::size_t>(
      static_cast<std::size_t>(b.parallel) / files, 1, std::max<std::size_t>(1, archs)));
  b.why = fmt::format(
      "{} entr{} at once, {} compile job{} each, nvcc --threads {} ({} cores, "
      "{:.0f} GB available: at most {} compile processes)",
      b.jobs, b.jobs == 1 ? "y" : "ies", b.parallel, b.parallel == 1 ? "" : "s", b.nvcc_threads,
      cores, memory_gb, total);
  return b;
}

double available_memory_gb() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemAvailable:") return kb / (1024.0 * 1024.0);
    meminfo.ignore(256, '\n');
  }
  return 4.0;
}

}  // namespace sagebuild::backend
