#include <algorithm>

#include <fmt/format.h>

#include "backend/backend.h"
#include "backend/build_options.h"
#include "backend/native/current_environment.h"
#include "backend/registry.h"
#include "backend/wheel_finish.h"
#include "cli/commands/commands.h"
#include "cli/progress_display.h"
#include "cli/terminal.h"
#include "platform/interrupt.h"
#include "platform/process.h"
#include "toolchain/cuda.h"
#include "util/text.h"
#include "wheel/compare.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

// --timeout/--retries/... of the commands that talk to servers.
// sagebuild build: what the flags say, before the matrix is read.
struct BuildFlags {
  std::string profile;
  std::vector<std::string> entries;
  std::string env;  // "current" for --env current
  std::string platform = "linux";
  std::vector<std::string> cuda_paths;       // "X.Y=DIR"
  std::filesystem::path python = "python3";  // --env current: the interpreter
  std::string arch_list;                     // --env current: --arch-list
  bool require_clean = false;
  bool check_reproducible = false;
  backend::BuildOptions options;
};

class BuildCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("--env", flags_.env,
                   "current: the active interpreter, its torch and the CUDA found")
        ->check(CLI::IsMember({"current"}));
    cmd.add_option("--profile", flags_.profile, "build this profile's entries");
    cmd.add_option("--entry", flags_.entries,
                   "build only this entry (an id from `sagebuild matrix`); repeatable");
    cmd.add_option("--platform", flags_.platform, "platform of the entries")->capture_default_str();
    cmd.add_option("-j,--jobs", flags_.options.jobs, "entries built at once")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    cmd.add_option(
           "--backend", flags_.options.backend,
           "how entries build: " + backend::selectable_backend_list() + " (docs/architecture.md)")
        ->check(CLI::IsMember(backend::selectable_backend_names()))
        ->capture_default_str();
    cmd.add_option("--images", flags_.options.docker_images,
                   "--backend docker: the image set of matrix.yaml's docker.images (default: "
                   "$SAGEBUILD_DOCKER_IMAGES, then docker.default)");
    cmd.add_option("--docker-sagebuild", flags_.options.docker_sagebuild,
                   "--backend docker: a sagebuild executable in the repository that the targets "
                   "use instead of compiling their own (where it runs in their image)")
        ->check(CLI::ExistingFile);
    cmd.add_flag("--dry-run", flags_.options.dry_run,
                 "print each entry's toolchain, commands and environment; build nothing");
    cmd.add_flag("--force", flags_.options.force, "rebuild wheels that are up to date");
    cmd.add_option("--cache-dir", flags_.options.cache,
                   "environments, toolkits and kernels (default: $SAGEBUILD_CACHE_DIR, "
                   "else $XDG_CACHE_HOME/sagebuild, else ~/.cache/sagebuild)");
    cmd.add_flag_callback(
        "--no-cache", [this] { flags_.options.kernel_cache = false; },
        "compile the kernels for every entry instead of using the kernel cache");
    cmd.add_flag("--skip-unavailable", flags_.options.skip_unavailable,
                 "skip entries whose Python or CUDA toolkit this machine lacks, saying how "
                 "to get them, instead of failing");
    cmd.add_flag_callback(
        "--no-import-test", [this] { flags_.options.import_test = false; },
        "skip installing and importing each wheel in a fresh venv");
    cmd.add_option("--torch-index-url", flags_.options.torch.index_url,
                   "where torch comes from (default: pip's configured index)");
    cmd.add_option("--torch-find-links", flags_.options.torch.find_links,
                   "a directory or URL of torch wheels (pip --find-links)");
    cmd.add_option("--python-env", flags_.options.torch.existing,
                   "an interpreter whose environment has torch: entries of its Python and "
                   "torch build there; repeatable");
    cmd.add_option("--cuda-path", flags_.cuda_paths, toolchain::kCudaPathHelp);
    cmd.add_option("--python", flags_.python,
                   "--env current: interpreter whose torch to build against")
        ->capture_default_str();
    cmd.add_option("--dist", flags_.options.dist, "where verified wheels go")
        ->capture_default_str();
    cmd.add_option("--arch-list", flags_.arch_list,
                   "--env current: CUDA architectures (TORCH_CUDA_ARCH_LIST form; default: the "
                   "entry's)");
    cmd.add_flag("--require-clean", flags_.require_clean,
                 "refuse to build from a working tree with uncommitted changes");
    cmd.add_flag("--check-reproducible", flags_.check_reproducible,
                 "build twice and require byte-identical wheels");
  }

  int run() override { return build(flags_); }

 private:
  int build(const BuildFlags& flags) {
    if (flags.env.empty() && flags.profile.empty() && flags.entries.empty()) {
      throw CommandError{ErrorKind::usage,
                         "say what to build: --profile NAME, --entry ID, or --env current"};
    }
    if (!flags.env.empty() && (!flags.profile.empty() || !flags.entries.empty())) {
      throw CommandError{ErrorKind::usage,
                         "--env current builds this environment's wheel; it does not take "
                         "--profile or --entry"};
    }
    if (flags.env.empty() && flags.check_reproducible) {
      throw CommandError{ErrorKind::usage, "--check-reproducible works with --env current"};
    }
    const LoadedMatrix m = load();
    std::vector<matrix::Entry> selected;
    if (flags.env.empty()) {
      selected = select_entries(m, flags.profile, flags.entries, flags.platform);
      const auto builder = backend::make_backend(flags.options, selected);
      if (auto refused = builder->refuse(selected, flags.options)) {
        throw CommandError{ErrorKind::usage, refused.message};
      }
      if (flags.options.dry_run && builder->plans_for_another_runner()) {
        // A plan for another runner needs no version or toolchain of this machine.
        builder->describe(m.matrix, selected, flags.options, log_);
        return kSuccess;
      }
    }

    BuildSource source = build_source(m, flags.require_clean);
    backend::BuildOptions options = flags.options;
    options.root = m.root;
    options.package_version = source.version;
    options.git = std::move(source.git);
    options.source_date_epoch = source.source_date_epoch;
    if (auto normalized = backend::normalize_build_options(options, flags.cuda_paths);
        !normalized) {
      throw CommandError(normalized.error().as(ErrorKind::usage));
    }
    if (!flags.env.empty()) {
      auto current = backend::probe_current_environment(m.matrix, flags.python, flags.arch_list,
                                                        options.package_version);
      if (!current) throw CommandError(current.error().as(ErrorKind::build));
      if (!current->warning.empty()) log_.warning("sagebuild: warning: {}\n", current->warning);
      backend::use_current_environment(*current, options);
      selected = {current->entry};
    }
    log_.info("sagebuild: {} entr{} of {}, version {}, cache {}{}\n", selected.size(),
              selected.size() == 1 ? "y" : "ies",
              !flags.env.empty()      ? "this environment"
              : flags.profile.empty() ? "the matrix"
                                      : "profile " + flags.profile,
              options.package_version, options.cache.string(),
              options.kernel_cache ? "" : " (kernels not cached: --no-cache)");
    if (options.dry_run) {
      if (auto problem = backend::make_backend(options, selected)
                             ->describe(m.matrix, selected, options, log_)) {
        throw CommandError{
            problem.kind == backend::PlanProblem::Kind::usage ? ErrorKind::usage : ErrorKind::build,
            problem.message};
      }
      return kSuccess;
    }
    std::vector<std::string> ids;
    for (const auto& e : selected)
      ids.push_back(e.id);
    backend::write_last_run(m.root, ids);
    const auto results =
        run_builds(m, selected, options, flags.env.empty() ? Reason::in_table : Reason::in_error);
    if (flags.check_reproducible)
      return check_reproducibility(m, selected.front(), options, results.front());
    return kSuccess;
  }

  // Where a failed entry's reason goes besides its progress line: the results table (a profile
  // build: the error only counts), or the error itself (--env current, a single build).
  enum class Reason { in_table, in_error };

  // Builds the entries, prints the results table, and turns failures into the exit code.
  std::vector<backend::EntryResult> run_builds(const LoadedMatrix& m,
                                               const std::vector<matrix::Entry>& selected,
                                               const backend::BuildOptions& options,
                                               Reason reason) {
    const platform::InterruptGuard interrupts;
    const ProgressStyle style = running_in_github_actions() ? ProgressStyle::github
                                : terminal_redraws()        ? ProgressStyle::live
                                                            : ProgressStyle::plain;
    const auto builder = backend::make_backend(options, selected);
    // A backend whose build is one long step (Docker's bake): on GitHub its output goes to the
    // Actions log as it comes, not only into its log file.
    const bool ci_stream = builder->streams_build_output_on_ci() && style == ProgressStyle::github;
    const LogEcho logs = ci_stream && (log_.verbose() || !log_.quiet()) ? LogEcho::at_once
                         : log_.verbose()                               ? LogEcho::as_notes
                                                                        : LogEcho::off;
    auto status = make_progress(style, log_.result_stream(),
                                {.color = color_wanted(), .quiet = log_.quiet(), .logs = logs});
    auto results = builder->build(m.matrix, selected, options, *status, log_);
    const bool all_ok = std::all_of(results.begin(), results.end(),
                                    [](const backend::EntryResult& r) { return r.ok(); });
    if (!log_.quiet() || !all_ok) log_.result("\n{}", backend::format_results(results));
    std::size_t failed = 0, verification = 0, built = 0;
    std::vector<const backend::EntryResult*> skipped;
    for (const auto& r : results) {
      if (r.ok())
        ++built;
      else if (r.outcome == backend::EntryOutcome::verification_failed)
        ++verification;
      else if (r.outcome == backend::EntryOutcome::skipped)
        skipped.push_back(&r);
      else
        ++failed;
    }
    const stdfs::path dist = options.dist.is_absolute() ? options.dist : m.root / options.dist;
    if (platform::stop_requested()) {
      throw CommandError{ErrorKind::interrupted,
                         fmt::format("interrupted by {}: {} of {} entr{} finished; nothing "
                                     "unfinished reached {}",
                                     platform::stop_cause(), built, results.size(),
                                     results.size() == 1 ? "y" : "ies", options.dist.string())};
    }
    if (failed + verification > 0) {
      const std::string why = reason == Reason::in_error && results.size() == 1
                                  ? results.front().message
                                  : fmt::format("{} of {} entries failed; logs under build/logs/",
                                                failed + verification, results.size());
      throw CommandError{failed ? ErrorKind::build : ErrorKind::verify, why};
    }
    if (!skipped.empty()) {
      log_.info(
          "sagebuild: skipped {} entr{} this machine lacks the toolchain of "
          "(--skip-unavailable):\n",
          skipped.size(), skipped.size() == 1 ? "y" : "ies");
      for (const auto* r : skipped)
        log_.info("  {}: {}\n", r->id, backend::short_reason(r->message));
    }
    if (built == 0) {
      throw CommandError{ErrorKind::build, fmt::format("no entry could be built on this machine "
                                                       "({} skipped)",
                                                       skipped.size())};
    }
    log_.info("sagebuild: {} wheel{} in {}\n", built, built == 1 ? "" : "s", dist.string());
    return results;
  }

  // Builds the same entry again in another directory and compares its wheel byte for byte with
  // the first; the second wheel never reaches dist/.
  int check_reproducibility(const LoadedMatrix& m, const matrix::Entry& entry,
                            backend::BuildOptions options, const backend::EntryResult& first) {
    log_.info("sagebuild: --check-reproducible: building it a second time\n");
    options.reproducibility_run = true;
    // The first build is an ordinary one (kernels and binding from sagebuild's cache, objects
    // from ccache, or the wheel up to date); the second compiles everything afresh, with
    // neither cache: a wheel must not depend on how its parts were built, nor on when.
    options.kernel_cache = false;
    options.compiler_launcher = false;
    options.dist = m.root / "build" / "sagebuild" / "reproducibility";
    std::error_code ec;
    stdfs::remove_all(options.dist, ec);
    const auto again = run_builds(m, {entry}, options, Reason::in_error);
    auto compared = wheel::compare_wheels(first.wheel, again.front().wheel);
    if (!compared) throw CommandError(compared.error().as(ErrorKind::build));
    if (compared->identical) {
      log_.result("sagebuild: reproducible: the second build of {} is byte-identical\n",
                  first.wheel.filename().string());
      return kSuccess;
    }
    std::string lines;
    for (const auto& d : compared->differences) {
      lines += fmt::format("\n  {}{}", d.entry.empty() ? "" : d.entry + ": ", d.detail);
    }
    throw CommandError{
        ErrorKind::verify,
        fmt::format("not reproducible: two builds of {} differ (second: {}):{}",
                    first.wheel.filename().string(), again.front().wheel.string(), lines)};
  }

  BuildFlags flags_;
};

}  // namespace

std::unique_ptr<Command> make_build_command(const Context& context) {
  return std::make_unique<BuildCommand>(context);
}

}  // namespace sagebuild::cli
