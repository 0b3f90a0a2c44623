#include "backend/docker_build.h"

#include <chrono>
#include <sstream>

#include <fmt/format.h>

#include "backend/bake.h"
#include "backend/wheel_finish.h"
#include "platform/process.h"
#include "util/fs.h"
#include "util/json_text.h"
#include "util/secrets.h"
#include "util/text.h"

namespace sagebuild::backend {
namespace {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct DockerPlan {
  stdfs::path bake_file;
  stdfs::path out_dir;
  nlohmann::ordered_json bake;
  std::vector<std::string> argv;
};

DockerPlan plan(const std::vector<matrix::Entry>& entries, const BuildOptions& o) {
  DockerPlan p;
  p.bake_file = o.root / "build" / "sagebuild" / "docker-bake.json";
  p.out_dir = o.root / "build" / "sagebuild" / "docker-out";
  BakeOptions bake;
  bake.context = o.root.string();
  bake.dockerfile = "docker/Dockerfile.linux";
  bake.output_dir = p.out_dir.string();
  bake.output_per_target = true;
  p.bake = make_bake_file({{"sagebuild", entries}}, bake);
  std::vector<std::string> targets, set;
  for (const auto& e : entries)
    targets.push_back(e.id);
  if (!o.torch.index_url.empty()) set.push_back("*.args.TORCH_INDEX_URL=" + o.torch.index_url);
  if (o.force) set.push_back("*.no-cache=true");
  p.argv = bake_command(p.bake_file.string(), targets, set);
  return p;
}

std::string shown(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const auto& w : argv)
    words.push_back(w.find_first_of(" ;*") == std::string::npos ? redact_url(w)
                                                                : "'" + redact_url(w) + "'");
  return text::join(words, " ");
}

}  // namespace

void describe_docker(const std::vector<matrix::Entry>& entries, const BuildOptions& o,
                     std::ostream& out) {
  const DockerPlan p = plan(entries, o);
  out << fmt::format("bake file    {} ({} targets)\n", p.bake_file.string(), entries.size());
  out << fmt::format("command      {}\n", shown(p.argv));
  for (const auto& e : entries) {
    out << fmt::format("{}\n  wheel        {}\n  output       {}\n", e.id, identity_of(e).file_name,
                       (p.out_dir / e.id).string());
  }
}

std::vector<EntryResult> build_entries_docker(const matrix::Matrix&,
                                              const std::vector<matrix::Entry>& entries,
                                              const BuildOptions& o, Progress& progress,
                                              std::ostream& out) {
  const auto start = Clock::now();
  const DockerPlan p = plan(entries, o);
  const stdfs::path log = o.root / "build" / "logs" / "docker-bake.log";
  std::error_code ec;
  stdfs::create_directories(log.parent_path(), ec);
  stdfs::remove(log, ec);
  for (const auto& e : entries)
    stdfs::remove_all(p.out_dir / e.id, ec);  // only this run's wheels are collected
  std::vector<EntryResult> results(entries.size());
  auto written = fs::write_file_atomic(p.bake_file, json_text(p.bake, 2) + "\n");
  out << fmt::format("sagebuild: {}\n", shown(p.argv));
  for (const auto& e : entries)
    progress.phase(e.id, "docker buildx bake");

  Expected<platform::ProcessResult> ran = Error{written ? "" : written.error().message};
  if (written) {
    ran = platform::run_process(p.argv, {.working_directory = o.root,
                                         .timeout = std::chrono::hours(6),
                                         .keep_output = 8192,
                                         .log_file = log});
  }
  const double bake_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::string failure;
  if (!ran) {
    failure = ran.error().message.empty() ? "cannot run docker" : ran.error().message;
  } else if (!ran->ok()) {
    failure = fmt::format("docker buildx bake failed ({}); log: {}\n{}", ran->describe(),
                          log.string(), text::last_lines(ran->output, 12));
  }

  for (std::size_t i = 0; i < entries.size(); ++i) {
    const matrix::Entry& e = entries[i];
    EntryResult& r = results[i];
    r.id = e.id;
    r.log = log;
    r.phases.push_back({"docker", bake_seconds});
    // A target whose wheel is there succeeded, even when another target failed the bake.
    stdfs::path produced;
    for (const auto& f : stdfs::directory_iterator(p.out_dir / e.id, ec)) {
      if (f.path().extension() == ".whl") produced = f.path();
    }
    if (platform::stop_requested()) {
      r.outcome = EntryOutcome::interrupted;
      r.message =
          fmt::format("interrupted by {} during docker buildx bake", platform::stop_cause());
    } else if (produced.empty()) {
      r.outcome = EntryOutcome::build_failed;
      r.message = failure.empty() ? fmt::format("the {} target exported no wheel into {}", e.id,
                                                (p.out_dir / e.id).string())
                                  : failure;
    } else {
      const auto verify_start = Clock::now();
      std::ostringstream report;
      const FinishedWheel done = verify_and_move(
          produced, o.dist.is_absolute() ? o.dist : o.root / o.dist, expected_build(e), {}, report);
      r.phases.push_back(
          {"verify", std::chrono::duration<double>(Clock::now() - verify_start).count()});
      r.wheel = done.wheel;
      if (done.outcome == FinishedWheel::Outcome::moved) {
        r.outcome = EntryOutcome::built;
        r.sha256 = done.sha256;
        r.size = done.size;
        r.checks = done.checks;
        r.message = fmt::format("{} ({:.1f} MB, {} checks passed)", done.wheel.filename().string(),
                                static_cast<double>(done.size) / 1e6, done.checks);
      } else {
        r.outcome = done.outcome == FinishedWheel::Outcome::verification_failed
                        ? EntryOutcome::verification_failed
                        : EntryOutcome::build_failed;
        r.message = done.message + "\n" + done.findings;
      }
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    write_result(o.root, e, r);
    std::string line =
        r.ok() ? r.message : fmt::format("{}: {}", outcome_name(r.outcome), r.message);
    progress.finished(r.id, r.ok(), line);
  }
  progress.stop();
  return results;
}

}  // namespace sagebuild::backend
