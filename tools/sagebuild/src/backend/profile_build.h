// sagebuild build --profile P [--entry ID]: every selected matrix entry built natively into a
// verified wheel in dist/. Per entry:
//   toolchain    the entry's Python (toolchain/python.h) and CUDA toolkit, found or
//                provisioned (toolchain/cuda.h): first, as it fails fast
//   environment  a venv of that Python with the entry's torch (toolchain/environment.h), made
//                once in the cache
//   kernels      the kernel library from the kernel cache, compiled on a miss (kernel_cache.h)
//   wheel        package.build_command in the environment, linking the cached kernels
//   verify       renamed, provenance recorded, every verify-wheel check incl. an import in a
//                fresh venv, then moved into dist/ (wheel_finish.h)
// An entry whose inputs (sources, toolchain, torch, version, commit) are those of the wheel
// already in dist/ is "up to date" and not rebuilt (--force rebuilds). Entries run in parallel
// (--jobs); a failed or interrupted entry leaves nothing in dist/. build/results/<id>.json
// records each outcome for `sagebuild summary`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/progress.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "toolchain/environment.h"
#include "vcs/git.h"

namespace sagebuild::backend {

struct ProfileBuildOptions {
  std::filesystem::path root;  // directory of matrix.yaml
  std::string package_version;
  std::optional<vcs::GitState> git;
  std::int64_t source_date_epoch = 315532800;
  std::filesystem::path dist = "dist";  // relative to root unless absolute
  std::filesystem::path cache;          // cache root: environments, toolkits, kernels
  bool kernel_cache = true;             // false (--no-cache): kernels compiled for each entry
  int jobs = 1;
  bool force = false;
  bool dry_run = false;
  bool import_test = true;
  std::string backend = "native";  // native or docker
  toolchain::TorchSource torch;
  std::vector<std::pair<Version, std::filesystem::path>> cuda_paths;  // --cuda-path
};

struct PhaseTime {
  std::string phase;
  double seconds = 0;
};

struct EntryResult {
  std::string id;
  // built, up_to_date, build_failed, verification_failed, interrupted, not_started
  std::string status;
  std::string message;
  std::filesystem::path wheel;
  std::string sha256;
  std::uint64_t size = 0;
  std::size_t checks = 0;  // verify-wheel checks that passed
  std::vector<PhaseTime> phases;
  std::filesystem::path log;
  std::string kernels;  // kernel cache key
  bool kernel_cache_hit = false;
  double seconds = 0;
  bool ok() const { return status == "built" || status == "up_to_date"; }
};

struct BuildBudget {
  int jobs = 1;          // entries at once
  int parallel = 1;      // compile jobs per entry
  int nvcc_threads = 1;  // nvcc --threads per compile job
  std::string why;       // the rule, for the log
};

// The rule (docs/build.md): compile processes in all = min(cores, available memory / 1.5 GB);
// each running entry gets an equal share; nvcc --threads spreads what is left of an entry's share
// over its kernel files' architectures.
BuildBudget plan_budget(int requested_jobs, std::size_t entries, unsigned cores, double memory_gb,
                        std::size_t kernel_files, std::size_t archs);

std::vector<EntryResult> build_entries(const matrix::Matrix& m,
                                       const std::vector<matrix::Entry>& entries,
                                       const ProfileBuildOptions& options, Progress& progress,
                                       std::ostream& out);

// --dry-run: for each entry, the interpreter, environment, toolkit and kernel cache entry it
// would use and the exact build command and environment, without building or installing.
void describe_entries(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                      const ProfileBuildOptions& options, std::ostream& out);

// build/results/<entry>.json: what `sagebuild summary` reads; `inputs` ({"digest", "values"}),
// when given, is what the next run compares to decide that the wheel is up to date.
void write_result(const std::filesystem::path& root, const matrix::Entry& e, const EntryResult& r,
                  const nlohmann::json& inputs = {});

// The table printed at the end, and what `sagebuild summary` reads.
std::string format_results(const std::vector<EntryResult>& results);

}  // namespace sagebuild::backend
