#include "backend/docker/docker_doctor.h"

#include <chrono>

#include <fmt/format.h>

#include "backend/docker/docker_build.h"
#include "platform/process.h"

namespace sagebuild::backend {

using namespace std::chrono_literals;

DoctorCheck docker_engine_check() {
  DoctorCheck check{"docker", "Docker (--backend docker)"};
  auto client =
      platform::run_process({"docker", "--version"}, {.timeout = 20s, .keep_output = 1024});
  if (!client || !client->ok()) {
    check.health = Health::warning;
    check.detail = "no docker client: --backend docker cannot run here (native builds can)";
    check.fix =
        "install Docker with buildx to build in containers (scripts/docker-engine.sh on a "
        "machine without systemd); not needed otherwise";
    return check;
  }
  // "Docker version 27.1.1, build 6312585"
  std::string version = client->last_line();
  if (version.starts_with("Docker version ")) version = version.substr(15);
  version = version.substr(0, version.find(','));
  auto engine = platform::run_process({"docker", "info", "--format", "{{.ServerVersion}}"},
                                      {.timeout = 20s, .keep_output = 4096});
  auto buildx =
      platform::run_process({"docker", "buildx", "version"}, {.timeout = 20s, .keep_output = 1024});
  const bool has_buildx = buildx && buildx->ok();
  if (!engine || !engine->ok()) {
    check.health = Health::warning;
    check.detail = fmt::format(
        "client {}{}, but no engine answers: --backend docker cannot run "
        "here (native builds can)",
        version, has_buildx ? " with buildx" : "");
    check.fix =
        "start the Docker engine (scripts/docker-engine.sh on a machine without systemd) or "
        "point DOCKER_HOST at one to build in containers";
    return check;
  }
  if (!has_buildx) {
    check.health = Health::warning;
    check.detail = fmt::format("engine {}, no buildx: --backend docker needs `docker buildx bake`",
                               engine->last_line());
    check.fix =
        "install the buildx plugin (docker-buildx-plugin; scripts/docker-engine.sh installs "
        "Debian's)";
    return check;
  }
  check.detail =
      fmt::format("client {}, engine {}, {}", version, engine->last_line(), buildx->last_line());
  return check;
}

DoctorReport examine_docker(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                            const BuildOptions& o) {
  DoctorReport report;
  report.checks.push_back(docker_engine_check());
  const auto problems = docker_entry_problems(m, entries, o);
  DoctorCheck images{"docker", "images of the entries"};
  if (problems.empty()) {
    images.detail = fmt::format(
        "every entry's rule of docker.images resolves and its local "
        "images are present ({} entries)",
        entries.size());
  } else {
    images.health = Health::problem;
    images.detail = fmt::format("{} of {} entries cannot start", problems.size(), entries.size());
    images.fix = "each entry below says why";
  }
  report.checks.push_back(images);
  for (const matrix::Entry& e : entries) {
    const auto problem = problems.find(e.id);
    report.entries.push_back(
        {e.id, problem == problems.end(), problem == problems.end() ? "" : problem->second});
  }
  return report;
}

std::optional<DoctorCheck> docker_availability() {
  if (!platform::find_in_path("docker")) return std::nullopt;
  return docker_engine_check();
}

}  // namespace sagebuild::backend
