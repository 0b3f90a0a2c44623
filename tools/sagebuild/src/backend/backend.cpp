#include "backend/backend.h"

#include <algorithm>

#include <fmt/format.h>

#include "backend/docker/docker_build.h"
#include "backend/msvc/msvc.h"
#include "backend/native/build_plan.h"
#include "backend/native/entry_build.h"
#include "backend/wheel_finish.h"

namespace sagebuild::backend {
namespace {

PlanProblem usage(std::string message) {
  return {PlanProblem::Kind::usage, std::move(message)};
}

PlanProblem built_on_its_runner(const matrix::Entry& e) {
  return usage(fmt::format(
      "{} is a {} entry: it builds on a {} runner (the MSVC backend), not here (--dry-run shows "
      "its plan); pick --platform linux",
      e.id, e.os, e.os));
}

class NativeBackend final : public BuildBackend {
 public:
  const char* name() const override { return "native"; }

  PlanProblem refuse(const std::vector<matrix::Entry>& entries,
                     const BuildOptions&) const override {
    for (const auto& e : entries) {
      if (e.os != "linux") return built_on_its_runner(e);
    }
    return {};
  }

  PlanProblem describe(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions& o, Log& log) const override {
    const auto unavailable = describe_entries(m, entries, o, log);
    log.result("sagebuild: {} of {} entr{} can build here", entries.size() - unavailable.size(),
               entries.size(), entries.size() == 1 ? "y" : "ies");
    if (unavailable.empty()) {
      log.result("\n");
      return {};
    }
    log.result("; {} cannot:\n", unavailable.size());
    for (const auto& u : unavailable)
      log.result("  {}: {}\n", u.id, u.reason.substr(0, u.reason.find(':')));
    if (o.skip_unavailable) return {};
    return {PlanProblem::Kind::unavailable,
            fmt::format("{} entr{} cannot build on this machine (see above; --skip-unavailable "
                        "builds the others)",
                        unavailable.size(), unavailable.size() == 1 ? "y" : "ies")};
  }

  std::vector<EntryResult> build(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                                 const BuildOptions& o, Progress& progress,
                                 Log& log) const override {
    return build_entries(m, entries, o, progress, log);
  }
};

class DockerBackend final : public BuildBackend {
 public:
  const char* name() const override { return "docker"; }

  PlanProblem refuse(const std::vector<matrix::Entry>& entries,
                     const BuildOptions&) const override {
    for (const auto& e : entries) {
      if (e.docker_platform.empty() || e.os != "linux") {
        return usage(
            fmt::format("{}: platform '{}' has no 'docker:' platform in matrix.yaml, so "
                        "the Docker backend cannot build it",
                        e.id, e.platform));
      }
    }
    return {};
  }

  PlanProblem describe(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions& o, Log& log) const override {
    const std::string problem = describe_docker(m, entries, o, log);
    return problem.empty() ? PlanProblem{} : usage(problem);
  }

  std::vector<EntryResult> build(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                                 const BuildOptions& o, Progress& progress,
                                 Log& log) const override {
    return build_entries_docker(m, entries, o, progress, log);
  }
};

// Windows entries: the plan on any host; the build itself runs on a Windows runner.
class MsvcBackend final : public BuildBackend {
 public:
  const char* name() const override { return "msvc"; }

  PlanProblem refuse(const std::vector<matrix::Entry>& entries,
                     const BuildOptions& o) const override {
    if (o.dry_run || entries.empty()) return {};
    return built_on_its_runner(entries.front());
  }

  PlanProblem describe(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions&, Log& log) const override {
    std::vector<MsvcEntryPlan> plans;
    for (const auto& e : entries)
      plans.push_back({e.id, identity_of(e).file_name, e.cuda, m.package.build_command});
    describe_msvc(plans, log);
    return {};
  }

  std::vector<EntryResult> build(const matrix::Matrix&, const std::vector<matrix::Entry>& entries,
                                 const BuildOptions& o, Progress& progress, Log&) const override {
    // refuse() stops this before any build; kept total for a caller that skips it.
    std::vector<EntryResult> results;
    for (const auto& e : entries) {
      EntryResult r;
      r.id = e.id;
      r.outcome = EntryOutcome::build_failed;
      r.message = refuse({e}, o).message;
      progress.finished(r.id, false, r.message);
      results.push_back(std::move(r));
    }
    progress.stop();
    return results;
  }
};

}  // namespace

std::unique_ptr<BuildBackend> make_backend(const BuildOptions& options,
                                           const std::vector<matrix::Entry>& entries) {
  if (options.backend == Backend::docker) return std::make_unique<DockerBackend>();
  const bool all_windows =
      !entries.empty() && std::all_of(entries.begin(), entries.end(),
                                      [](const matrix::Entry& e) { return e.os == "windows"; });
  if (all_windows) return std::make_unique<MsvcBackend>();
  return std::make_unique<NativeBackend>();
}

}  // namespace sagebuild::backend
