#include "backend/docker/docker_backend.h"

#include <fmt/format.h>

#include "backend/docker/docker_build.h"
#include "backend/docker/docker_doctor.h"

namespace sagebuild::backend {
namespace {

class DockerBackend final : public BuildBackend {
 public:
  const char* name() const override { return "docker"; }

  PlanProblem refuse(const std::vector<matrix::Entry>& entries,
                     const BuildOptions&) const override {
    for (const auto& e : entries) {
      if (e.docker_platform.empty() || e.os != "linux") {
        return usage_problem(
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
    return problem.empty() ? PlanProblem{} : usage_problem(problem);
  }

  std::vector<EntryResult> build(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                                 const BuildOptions& o, Status& status, Log& log) const override {
    return build_entries_docker(m, entries, o, status, log);
  }

  DoctorReport examine(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                       const BuildOptions& o) const override {
    return examine_docker(m, entries, o);
  }

  // One long bake (an hour for a release): on CI its output goes to the log as it comes, not
  // only into build/logs/docker-bake.log.
  bool streams_build_output_on_ci() const override { return true; }
};

}  // namespace

std::unique_ptr<BuildBackend> make_docker_backend() {
  return std::make_unique<DockerBackend>();
}

}  // namespace sagebuild::backend
