#include "backend/docker/docker_build.h"

#include <chrono>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "backend/build_results.h"
#include "backend/cache/compile_cache.h"
#include "backend/docker/bake.h"
#include "backend/docker/bake_progress.h"
#include "backend/docker/docker_image.h"
#include "backend/entry_log.h"
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

}  // namespace

Expected<std::string> path_in_context(const stdfs::path& root, const stdfs::path& file) {
  std::error_code ec;
  const stdfs::path relative =
      stdfs::weakly_canonical(file, ec).lexically_relative(stdfs::weakly_canonical(root, ec));
  const std::string shown = relative.generic_string();
  if (ec || relative.empty() || shown == "." || *relative.begin() == "..") {
    return Error{
        fmt::format("--docker-sagebuild {}: not in the build context {} (copy it into the "
                    "repository, e.g. ./sagebuild)",
                    file.string(), root.string())};
  }
  const auto ignore = fs::read_file(root / ".dockerignore", 1u << 16);
  const std::string top = shown.substr(0, shown.find('/') + 1);
  for (const std::string& line : text::split(ignore ? *ignore : "", '\n')) {
    const std::string_view pattern = text::trim(line);
    if (!top.empty() && top.back() == '/' && (pattern == top || pattern == "/" + top)) {
      return Error{
          fmt::format("--docker-sagebuild {}: .dockerignore leaves {} out of the build "
                      "context (copy it into the repository, e.g. ./sagebuild)",
                      file.string(), top)};
    }
  }
  return shown;
}

namespace {

Expected<DockerPlan> plan(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                          const BuildOptions& o) {
  DockerPlan p;
  p.bake_file = o.root / "build" / "sagebuild" / "docker-bake.json";
  p.out_dir = o.root / "build" / "sagebuild" / "docker-out";
  BakeOptions bake;
  bake.context = o.root.string();
  bake.dockerfile = "docker/Dockerfile.linux";
  bake.output_dir = p.out_dir.string();
  bake.output_per_target = true;
  bake.images = o.docker_images;
  bake.ca_bundle = host_ca_bundle();
  bake.compile_cache_remote_env = host_compile_cache_remote_env();
  if (!o.docker_sagebuild.empty()) {
    auto prebuilt = path_in_context(o.root, o.docker_sagebuild);
    if (!prebuilt) return prebuilt.error();
    bake.prebuilt_sagebuild = *prebuilt;
  }
  auto file = make_bake_file(m, {{"sagebuild", entries}}, bake);
  if (!file) return file.error();
  p.bake = std::move(*file);
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

// The engine's quick answers (versions, image inspection).
platform::ProcessOptions quick() {
  return {.timeout = std::chrono::seconds(30), .keep_output = 1024};
}

// Images scripts/docker-engine.sh makes (no registry has them): the command that makes one.
std::optional<std::string> local_image_fix(const std::string& image) {
  if (image.starts_with("sagebuild-base:")) return "scripts/docker-engine.sh start";
  if (image.starts_with("sagebuild-python:")) {
    return "scripts/docker-engine.sh python " + image.substr(image.find(':') + 1);
  }
  return std::nullopt;
}

// Why `docker buildx bake` cannot run here, or "".
std::string engine_problem() {
  auto engine =
      platform::run_process({"docker", "version", "--format", "{{.Server.Version}}"}, quick());
  if (!engine) {
    return "no docker client on PATH: install Docker (a machine without systemd: "
           "scripts/docker-engine.sh installs and starts one)";
  }
  if (!engine->ok()) {
    return "no Docker engine answers: start it (scripts/docker-engine.sh on a machine without "
           "systemd) or point DOCKER_HOST at one";
  }
  auto buildx = platform::run_process({"docker", "buildx", "version"}, quick());
  if (!buildx || !buildx->ok()) {
    return "the docker client has no buildx plugin, which `docker buildx bake` needs: install "
           "docker-buildx-plugin (scripts/docker-engine.sh installs Debian's)";
  }
  return "";
}

}  // namespace

std::map<std::string, std::string> docker_entry_problems(const matrix::Matrix& m,
                                                         const std::vector<matrix::Entry>& entries,
                                                         const BuildOptions& o) {
  std::map<std::string, std::string> problems;
  if (const std::string engine = engine_problem(); !engine.empty()) {
    for (const matrix::Entry& e : entries)
      problems[e.id] = engine;
    return problems;
  }
  auto set = docker_image_set(m, o.docker_images);
  std::map<std::string, bool> present;  // image -> the engine has it
  for (const matrix::Entry& e : entries) {
    if (!set) {
      problems[e.id] = set.error().message;
      continue;
    }
    auto image = docker_image_for(m, e, **set);
    if (!image) {
      problems[e.id] = image.error().message;
      continue;
    }
    for (const std::string& name : {image->base, image->python_image}) {
      const auto fix = local_image_fix(name);
      if (!fix) continue;
      if (!present.count(name)) {
        auto inspected = platform::run_process({"docker", "image", "inspect", name}, quick());
        present[name] = inspected && inspected->ok();
      }
      if (!present[name]) {
        problems[e.id] = fmt::format("the engine has no image {} (docker.images.{}): {}", name,
                                     (*set)->name, *fix);
        break;
      }
    }
  }
  return problems;
}

std::string describe_docker(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                            const BuildOptions& o, Log& log) {
  const auto p = plan(m, entries, o);
  if (!p) return p.error().message;
  log.result("bake file    {} ({} targets)\n", p->bake_file.string(), entries.size());
  log.result("command      {}\n", shown(p->argv));
  for (const auto& e : entries) {
    const auto& args = p->bake["target"][e.id]["args"];
    log.result(
        "{}\n  wheel        {}\n  image        {} (CUDA: {}, Python {}: {})\n"
        "  output       {}\n",
        e.id, identity_of(e).file_name, args["BASE_IMAGE"].get<std::string>(),
        args["CUDA_SOURCE"].get<std::string>() +
            (args.contains("CUDA_SUITE") ? " " + args["CUDA_SUITE"].get<std::string>() : ""),
        args["PYTHON_VERSION"].get<std::string>(),
        args["PYTHON_SOURCE"].get<std::string>() == "image"
            ? args["PYTHON_IMAGE"].get<std::string>()
            : args["PYTHON_SOURCE"].get<std::string>(),
        (p->out_dir / e.id).string());
  }
  return {};
}

namespace {

// When a bake fails and the folder it exports into is nearly full, the likely cause: BuildKit's
// own error then says only "error from receiver: context canceled".
std::string low_space_note(const stdfs::path& out_dir) {
  std::error_code ec;
  stdfs::path at = out_dir;
  while (!at.empty() && !stdfs::exists(at, ec))
    at = at.parent_path();
  const auto space = stdfs::space(at, ec);
  constexpr std::uintmax_t kLow = 256ull << 20;  // less than one entry's build needs
  if (ec || space.available >= kLow) return "";
  return fmt::format(
      "\nno space left on device: {} KiB free where the wheels are exported ({}); free space "
      "there and build again",
      space.available >> 10, at.string());
}

// What the build inside the container recorded (docker/Dockerfile.linux exports its
// build/results record beside the wheel): the Python it built with (the image's, not this
// host's), the compile cache's figures, the kernel cache, and the phases that compiled, for the
// progress, build/results and the GitHub summary.
void report_inner_build(const stdfs::path& exported, const std::string& id, EntryResult& r,
                        Status& status) {
  const auto inner = read_result_file(exported / "sagebuild-results" / (id + ".json"), id);
  if (!inner) return;
  const EntryResult& in = inner->result;
  if (!in.python.empty()) r.python = in.python;
  r.compile_cache = in.compile_cache;
  r.kernels = in.kernels;
  r.kernel_cache_hit = in.kernel_cache_hit;
  for (const PhaseTime& phase : in.phases) {
    if (phase.phase == "kernels" || phase.phase == "binding" || phase.phase == "wheel") {
      r.phases.push_back(phase);
    }
  }
  for (const std::string& line : compile_cache_notes(r.compile_cache))
    status.note(id, line);
}

// One `docker buildx bake` of entries that can start (docker_entry_problems found nothing).
std::vector<EntryResult> bake_entries(const matrix::Matrix& m,
                                      const std::vector<matrix::Entry>& entries,
                                      const BuildOptions& o, Status& status, Log& log) {
  const auto start = Clock::now();
  std::vector<EntryResult> results(entries.size());
  auto planned = plan(m, entries, o);
  if (!planned) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      results[i].id = entries[i].id;
      results[i].outcome = EntryOutcome::build_failed;
      results[i].message = planned.error().message;
      status.finished(results[i].id, false, "build_failed: " + planned.error().message);
    }
    return results;
  }
  const DockerPlan& p = *planned;
  const stdfs::path bake_log = o.root / "build" / "logs" / "docker-bake.log";
  EntryLog bake_output(status, "docker-bake", bake_log);
  std::error_code ec;
  stdfs::create_directories(p.bake_file.parent_path(), ec);
  for (const auto& e : entries)
    stdfs::remove_all(p.out_dir / e.id, ec);  // only this run's wheels are collected
  auto written = fs::write_file_atomic(p.bake_file, json_text(p.bake, 2) + "\n");
  log.info("sagebuild: {}\n", shown(p.argv));
  log.result(
      "sagebuild: docker buildx bake of {} target{}; its output goes to {} ({} once the "
      "bake ends)\n",
      entries.size(), entries.size() == 1 ? "" : "s", bake_output.partial().string(),
      bake_log.filename().string());
  std::set<std::string> targets;
  for (const auto& e : entries) {
    status.phase(e.id, "docker buildx bake");
    targets.insert(e.id);
  }
  // Each target's step on the console as BuildKit starts it (bake_progress.h).
  BakeProgressReader reader(std::move(targets));

  Expected<platform::ProcessResult> ran = Error{written ? "" : written.error().message};
  if (written) {
    ran = platform::run_process(p.argv, {.working_directory = o.root,
                                         .timeout = std::chrono::hours(6),
                                         .keep_output = 8192,
                                         .log = bake_output.sink(),
                                         .on_line = [&](std::string_view line) {
                                           if (auto step = reader.feed(line))
                                             status.phase(step->target, step->step);
                                         }});
  }
  const double bake_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const stdfs::path bake_log_kept = bake_output.keep();
  std::string failure;
  if (!ran) {
    failure = ran.error().message.empty() ? "cannot run docker" : ran.error().message;
  } else if (!ran->ok()) {
    failure = fmt::format("docker buildx bake failed ({}); log: {}\n{}{}", ran->describe(),
                          bake_log_kept.string(), text::last_lines(ran->output, 12),
                          low_space_note(p.out_dir));
  }

  for (std::size_t i = 0; i < entries.size(); ++i) {
    const matrix::Entry& e = entries[i];
    EntryResult& r = results[i];
    r.id = e.id;
    r.log = bake_log_kept;
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
      report_inner_build(p.out_dir / e.id, e.id, r, status);
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
        if (!failure.empty()) {
          // The bake failed and left this wheel behind: a cut export (a full disk ends BuildKit's
          // local exporter with a truncated file), not a wheel the build made wrong.
          r.outcome = EntryOutcome::build_failed;
          r.message = fmt::format("{}\nthe exported wheel is incomplete: {}", failure,
                                  done.message + "\n" + done.findings);
        }
      }
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    write_result(o.root, e, r);
    std::string line =
        r.ok() ? r.message : fmt::format("{}: {}", outcome_name(r.outcome), r.message);
    status.finished(r.id, r.ok(), line);
  }
  return results;
}

}  // namespace

std::vector<EntryResult> build_entries_docker(const matrix::Matrix& m,
                                              const std::vector<matrix::Entry>& entries,
                                              const BuildOptions& o, Status& status, Log& log) {
  const auto problems = docker_entry_problems(m, entries, o);
  std::vector<matrix::Entry> ready;
  std::map<std::string, EntryResult> by_id;
  for (const matrix::Entry& e : entries) {
    const auto problem = problems.find(e.id);
    if (problem == problems.end()) {
      ready.push_back(e);
      continue;
    }
    EntryResult& r = by_id[e.id];
    r.id = e.id;
    r.outcome = o.skip_unavailable ? EntryOutcome::skipped : EntryOutcome::build_failed;
    r.message = problem->second;
    status.finished(r.id, o.skip_unavailable,
                    fmt::format("{}: {}", outcome_name(r.outcome), r.message));
  }
  if (!ready.empty()) {
    for (EntryResult& r : bake_entries(m, ready, o, status, log))
      by_id[r.id] = std::move(r);
  }
  status.stop();
  std::vector<EntryResult> results;
  for (const matrix::Entry& e : entries)
    results.push_back(std::move(by_id[e.id]));
  return results;
}

}  // namespace sagebuild::backend
