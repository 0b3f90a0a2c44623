// What a build of one entry came to, and build/results/<entry>.json, its record: written by every
// backend through write_result (the one writer), read back to decide whether the wheel in dist/
// is up to date and by `sagebuild summary`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cache/compile_cache.h"
#include "matrix/expand.h"

namespace sagebuild::backend {

enum class EntryOutcome {
  built,                // a new wheel is in dist/
  up_to_date,           // the wheel in dist/ was built from the same inputs: nothing done
  build_failed,         // a phase before verification failed
  verification_failed,  // the wheel was made but failed a check: it stays in build/sagebuild/
  interrupted,          // Ctrl-C or a termination signal during the entry
  not_started,          // the run was interrupted before this entry's turn
  skipped,              // --skip-unavailable: this machine lacks its Python or CUDA toolkit
};

// "built", "up_to_date", ...: the names results files and tables use.
std::string_view outcome_name(EntryOutcome outcome);
std::optional<EntryOutcome> parse_outcome(std::string_view name);

struct PhaseTime {
  std::string phase;
  double seconds = 0;
};

struct EntryResult {
  std::string id;
  EntryOutcome outcome = EntryOutcome::not_started;
  std::string message;  // the wheel and its checks when ok, else what went wrong
  std::filesystem::path wheel;
  std::string sha256;
  std::uint64_t size = 0;
  std::size_t checks = 0;  // verify-wheel checks that ran and passed
  // The interpreter and toolkit that built the wheel, as its provenance records them (a
  // stable-ABI entry builds with the newest Python found; the toolkit's own full version); empty
  // when nothing was built: the entry's are shown then.
  std::string python;
  std::string cuda;
  std::vector<PhaseTime> phases;
  std::filesystem::path log;
  std::string kernels;  // kernel cache key
  bool kernel_cache_hit = false;
  CompileCacheStats compile_cache;  // what ccache did for this entry's compiles
  double seconds = 0;
  bool ok() const { return outcome == EntryOutcome::built || outcome == EntryOutcome::up_to_date; }
};

// What decides an entry's wheel (sources, toolchain, torch, version, commit, ...), and its
// digest: a wheel in dist/ built from the same digest is up to date.
struct BuildInputs {
  nlohmann::json values = nlohmann::json::object();
  std::string digest;
};

std::filesystem::path results_file(const std::filesystem::path& root, const std::string& entry);

// build/results/<entry>.json. `inputs` are recorded for a wheel that was built, so that the
// next run can say which of them changed.
void write_result(const std::filesystem::path& root, const matrix::Entry& e, const EntryResult& r,
                  const BuildInputs* inputs = nullptr);

// The last recorded build of an entry whose wheel is still what dist/ holds.
struct RecordedBuild {
  EntryResult result;
  BuildInputs inputs;
};
std::optional<RecordedBuild> read_recorded_build(const std::filesystem::path& root,
                                                 const std::string& entry);
// A record write_result wrote, read from `file`: the build inside a container exports its own
// (docker/Dockerfile.linux), whose compile cache figures and phases the Docker backend reports.
std::optional<RecordedBuild> read_result_file(const std::filesystem::path& file,
                                              const std::string& entry);

// The inputs that differ between a recorded build and now, by name, for "rebuilding: changed
// since the last build: ...". Empty when the record holds no inputs to compare.
std::vector<std::string> changed_inputs(const BuildInputs& before, const BuildInputs& now);

// build/last-run.json: the entries the latest `sagebuild build` was asked for, so that `sagebuild
// summary` reports that run and not every result an earlier run left in build/results/.
void write_last_run(const std::filesystem::path& root, const std::vector<std::string>& entries);
std::optional<std::vector<std::string>> read_last_run(const std::filesystem::path& root);

// A failure's reason as a table cell: its first clause, at most 60 characters.
std::string short_reason(const std::string& message);

// The table printed at the end of a build (failures by their short reason).
std::string format_results(const std::vector<EntryResult>& results);

}  // namespace sagebuild::backend
