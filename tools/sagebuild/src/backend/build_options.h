// What a build is asked to do, in the backends' terms: where (root, dist, cache), how (jobs,
// backend, kernel cache, import test), with what (torch source, existing environments, CUDA
// toolkit paths), and the version and git state it records. The command line fills the raw
// fields; normalize_build_options makes them absolute and checks them, so that builds, which
// run in matrix.yaml's directory, see the paths the user meant.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolchain/environment.h"
#include "util/expected.h"
#include "util/version.h"
#include "vcs/git.h"

namespace sagebuild::backend {

struct BuildOptions {
  std::filesystem::path root;  // directory of matrix.yaml
  std::string package_version;
  std::optional<vcs::GitState> git;
  // ZIP timestamps and $SOURCE_DATE_EPOCH of the build: the commit's time, so that two builds
  // of one commit agree.
  std::int64_t source_date_epoch = 315532800;
  std::filesystem::path dist = "dist";  // relative to root unless absolute
  std::filesystem::path cache;          // cache root: environments, toolkits, kernels
  bool kernel_cache = true;             // false (--no-cache): kernels compiled for each entry
  int jobs = 1;
  bool force = false;
  bool dry_run = false;
  bool import_test = true;
  // Entries whose Python or CUDA toolkit this machine lacks (and cannot provision) are skipped,
  // with the reason and how to get them, instead of failing the build.
  bool skip_unavailable = false;
  std::string backend = "native";  // --backend: a selectable name of registry.h
  std::string docker_images;  // --images: a set of matrix.yaml's docker.images ("": the default)
  // --docker-sagebuild: a sagebuild executable in the build context (the repository) that the
  // Docker targets use instead of compiling their own, where it runs in their image; "": compile.
  std::filesystem::path docker_sagebuild;
  toolchain::TorchSource torch;
  std::vector<std::pair<Version, std::filesystem::path>> cuda_paths;  // --cuda-path
  // The reproducibility run of --check-reproducible: its own work directory (a build path that
  // leaks into the binaries shows up as a difference), no results file, no up-to-date check.
  bool reproducibility_run = false;
  // ccache or sccache (when on PATH) launches the compilers of the kernels and the binding.
  // Off for --check-reproducible's second build, which must compile afresh.
  bool compiler_launcher = true;
};

// Absolute paths for what is given relative to the current directory (cache, --python-env,
// --torch-find-links, --cuda-path), the default cache, and --cuda-path's "X.Y=DIR" specs
// parsed. --dist stays relative to matrix.yaml's directory, as documented.
Expected<Ok> normalize_build_options(BuildOptions& options,
                                     const std::vector<std::string>& cuda_path_specs);

// How many compile processes a build may run.
struct BuildBudget {
  int jobs = 1;          // entries at once
  int total = 1;         // compile processes in all (a shared cache entry's compile gets them)
  int parallel = 1;      // compile jobs per entry
  int nvcc_threads = 1;  // nvcc --threads per compile job
  std::string why;       // the rule, for the log
};

// The rule (docs/build.md): compile processes in all = min(cores, available memory / 1.5 GB);
// each running entry gets an equal share; nvcc --threads spreads what is left of an entry's share
// over its kernel files' architectures.
BuildBudget plan_budget(int requested_jobs, std::size_t entries, unsigned cores, double memory_gb,
                        std::size_t kernel_files, std::size_t archs);

// MemAvailable from /proc/meminfo, in GB (4 when it cannot be read).
double available_memory_gb();

}  // namespace sagebuild::backend
