#include "cli/app.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/bake.h"
#include "backend/build_options.h"
#include "backend/current_environment.h"
#include "backend/docker_build.h"
#include "backend/entry_build.h"
#include "backend/install_check.h"
#include "backend/msvc.h"
#include "backend/wheel_finish.h"
#include "cli/entry_json.h"
#include "cli/exit_codes.h"
#include "cli/progress_display.h"
#include "cli/terminal.h"
#include "github/output.h"
#include "github/release.h"
#include "github/simple_index.h"
#include "github/summary.h"
#include "matrix/expand.h"
#include "matrix/loader.h"
#include "matrix/package_version.h"
#include "net/http.h"
#include "net/retry.h"
#include "platform/interrupt.h"
#include "platform/process.h"
#include "registry/upload.h"
#include "util/fs.h"
#include "util/json_text.h"
#include "util/text.h"
#include "vcs/git.h"
#include "vcs/release_version.h"
#include "wheel/compare.h"
#include "wheel/filename.h"
#include "wheel/verify.h"
#include "wheel/zip_writer.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

// Thrown by commands; caught once in run(), which prints "sagebuild: error: ..." and exits.
struct CommandError {
  ExitCode code;
  std::string message;
};

// matrix.yaml is a few KiB; a file past this is not one (and /dev/zero never ends). At this size
// it still loads and validates in a few tenths of a second (tests/robustness_check.py).
constexpr std::size_t kMaxMatrixBytes = 1u << 20;

// GitHub Actions allows at most this many jobs from one matrix.
constexpr std::size_t kGithubMaxMatrixJobs = 256;

// --timeout/--retries/... of the commands that talk to servers.
// sagebuild build: what the flags say, before the matrix is read.
struct BuildFlags {
  std::string profile;
  std::vector<std::string> entries;
  std::string env;  // "current" for --env current
  std::string platform = "linux";
  std::string backend = "native";
  std::vector<std::string> cuda_paths;       // "X.Y=DIR"
  std::filesystem::path python = "python3";  // --env current: the interpreter
  std::string arch_list;                     // --env current: --arch-list
  bool require_clean = false;
  bool check_reproducible = false;
  backend::BuildOptions options;
};

struct NetworkFlags {
  int timeout = 60;          // seconds without progress before a transfer is abandoned
  int retries = 5;           // further attempts after the first
  double retry_wait = 1.0;   // first backoff, seconds (doubled each time)
  int retry_max_wait = 900;  // longest rate-limit wait accepted, seconds

  void add_to(CLI::App* cmd) {
    cmd->add_option("--timeout", timeout, "seconds without progress before a transfer fails")
        ->capture_default_str();
    cmd->add_option("--retries", retries, "further attempts after network errors, 5xx, 429")
        ->capture_default_str();
    cmd->add_option("--retry-wait", retry_wait, "first backoff in seconds, doubled per retry")
        ->capture_default_str();
    cmd->add_option("--retry-max-wait", retry_max_wait,
                    "longest rate-limit wait to sit out, in seconds")
        ->capture_default_str();
  }

  void apply(net::HttpOptions& http, net::RetryPolicy& retry, std::ostream& log) const {
    http.stall_timeout = std::chrono::seconds(std::max(1, timeout));
    http.user_agent = std::string("sagebuild/") + SAGEBUILD_VERSION;
    retry.max_attempts = std::max(1, retries + 1);
    retry.first_backoff = std::chrono::milliseconds(static_cast<long>(retry_wait * 1000));
    retry.max_wait = std::chrono::seconds(retry_max_wait);
    retry.note = [&log](const std::string& line) { log << "sagebuild: " << line << "\n"; };
  }
};

std::string env_or(std::initializer_list<const char*> names, std::string fallback = {}) {
  for (const char* name : names) {
    if (const char* v = std::getenv(name); v && *v) return v;
  }
  return fallback;
}

struct LoadedMatrix {
  matrix::Matrix matrix;
  stdfs::path root;             // directory of matrix.yaml: relative paths start here
  std::string display_name;     // how messages name the file
  std::string package_version;  // read from package.version
};

class Commands {
 public:
  Commands(std::ostream& out, std::ostream& err) : out_(out), err_(err) {}

  std::string matrix_option;  // --matrix / SAGEBUILD_MATRIX

  LoadedMatrix load() const {
    stdfs::path path = matrix_option;
    if (path.empty()) {
      const stdfs::path dir = fs::find_upwards(stdfs::current_path(), "matrix.yaml");
      if (dir.empty()) {
        throw CommandError{kConfigError,
                           "no matrix.yaml in this directory or above; run sagebuild in the "
                           "repository or pass --matrix FILE"};
      }
      path = dir / "matrix.yaml";
    }
    std::error_code ec;
    const stdfs::path relative = stdfs::relative(path, stdfs::current_path(), ec);
    const std::string display = (!ec && !relative.empty() && !relative.string().starts_with(".."))
                                    ? relative.string()
                                    : path.string();
    auto text = fs::read_file(path, kMaxMatrixBytes);
    if (!text) throw CommandError{kConfigError, text.error().message};

    matrix::LoadResult result = matrix::load_matrix(*text, display);
    if (!result.matrix) {
      report_diagnostics(result.diagnostics, *text);
      throw CommandError{kConfigError,
                         fmt::format("{} has {} problem{}", display, result.diagnostics.size(),
                                     result.diagnostics.size() == 1 ? "" : "s")};
    }
    LoadedMatrix loaded{std::move(*result.matrix), stdfs::absolute(path).parent_path(), display,
                        ""};
    auto version = matrix::read_package_version(loaded.root, loaded.matrix.package.version);
    if (!version) {
      report_diagnostics(
          {{display, loaded.matrix.package.version.location, version.error().message, ""}}, *text);
      throw CommandError{kConfigError, "cannot determine the package version"};
    }
    loaded.package_version = *version;
    return loaded;
  }

  // The matrix when one is given or found; verify-wheel works without one.
  std::optional<LoadedMatrix> load_if_present() const {
    if (matrix_option.empty() && fs::find_upwards(stdfs::current_path(), "matrix.yaml").empty()) {
      return std::nullopt;
    }
    return load();
  }

  // `install`: --import-test's options (the check after the import is matrix.yaml's).
  int verify_wheel(const std::vector<std::string>& files, wheel::VerifyOptions options,
                   const std::string& expect_profile, const std::string& expect_entry, bool json,
                   std::optional<backend::InstallCheckOptions> install) {
    for (auto* list : {&options.select, &options.ignore}) {
      std::vector<std::string> keys;
      for (const std::string& value : *list) {
        for (const std::string& key : text::split(value, ',')) {
          if (!key.empty()) keys.push_back(key);
        }
      }
      *list = std::move(keys);
    }
    for (const std::string& key : options.select)
      check_known_check(key);
    for (const std::string& key : options.ignore)
      check_known_check(key);
    const std::optional<LoadedMatrix> m = load_if_present();
    if (install) {
      if (m) install->check = m->matrix.package.import_check;
      options.import_tester = [check = *install](const std::filesystem::path& wheel,
                                                 const wheel::ImportRequest& request) {
        return backend::run_install_check(wheel, request, check);
      };
    }
    if (!m && (!expect_profile.empty() || !expect_entry.empty())) {
      throw CommandError{kUsageError,
                         "--expect-profile and --expect-entry need matrix.yaml "
                         "(run in the repository or pass --matrix)"};
    }
    if (m) {
      wheel::KnownVersions known;
      for (const auto& t : m->matrix.torch)
        known.torch.push_back(t.version);
      for (const auto& c : m->matrix.cuda)
        known.cuda.push_back(c.version);
      options.known = known;
      std::set<std::string> seen;
      for (const auto& profile : m->matrix.profiles) {
        for (const auto& e : expand(*m, profile.name, "all")) {
          if (seen.insert(e.id).second) options.known_entries.push_back(backend::expected_build(e));
        }
      }
      if (!expect_profile.empty()) {
        options.expected.emplace();
        for (const auto& e : expand(*m, expect_profile, "all"))
          options.expected->push_back(backend::expected_build(e));
      }
      if (!expect_entry.empty()) {
        auto it = std::find_if(options.known_entries.begin(), options.known_entries.end(),
                               [&](const auto& e) { return e.id == expect_entry; });
        if (it == options.known_entries.end()) {
          std::vector<std::string> ids;
          for (const auto& e : options.known_entries)
            ids.push_back(e.id);
          throw CommandError{kUsageError, fmt::format("unknown entry '{}'{}", expect_entry,
                                                      text::did_you_mean(expect_entry, ids))};
        }
        options.expected = std::vector<wheel::ExpectedBuild>{*it};
      }
    }
    const std::vector<stdfs::path> wheels = wheel_files("verify-wheel", files);
    nlohmann::ordered_json reports = nlohmann::ordered_json::array();
    std::size_t failed = 0;
    const bool annotate = running_in_github_actions();
    for (const stdfs::path& file : wheels) {
      const wheel::WheelReport report = wheel::verify_wheel(file, options);
      if (!report.ok()) ++failed;
      if (json) {
        reports.push_back(wheel::report_to_json(report));
        continue;
      }
      out_ << wheel::format_report(report);
      if (annotate) {
        for (const auto& f : report.findings) {
          out_ << error_annotation(file.string(), 0, 0,
                                   fmt::format("{} {}{}", f.check,
                                               f.where.empty() ? "" : f.where + ": ", f.message))
               << "\n";
        }
      }
    }
    if (json) out_ << json_text(reports, 2) << "\n";
    if (failed) {
      err_ << fmt::format("sagebuild: {} of {} wheel{} failed verification\n", failed,
                          wheels.size(), wheels.size() == 1 ? "" : "s");
      return kVerificationFailure;
    }
    return kSuccess;
  }

  // The wheels named on the command line: files as given, directories for their *.whl (sorted).
  static std::vector<stdfs::path> wheel_files(const std::string& command,
                                              const std::vector<std::string>& inputs) {
    std::vector<stdfs::path> wheels;
    for (const std::string& input : inputs) {
      std::error_code ec;
      if (stdfs::is_directory(input, ec)) {
        std::vector<stdfs::path> found;
        for (const auto& f : stdfs::directory_iterator(input, ec)) {
          if (f.path().extension() == ".whl") found.push_back(f.path());
        }
        if (found.empty()) {
          throw CommandError{kUsageError, fmt::format("{}: no wheels (*.whl) in the directory {}",
                                                      command, input)};
        }
        std::sort(found.begin(), found.end());
        wheels.insert(wheels.end(), found.begin(), found.end());
      } else if (stdfs::is_regular_file(input, ec)) {
        wheels.emplace_back(input);
      } else {
        throw CommandError{kUsageError,
                           fmt::format("{}: no such wheel or directory: {}", command, input)};
      }
    }
    if (wheels.empty()) throw CommandError{kUsageError, command + ": no wheels given"};
    return wheels;
  }

  // For differential tests against packaging.utils.parse_wheel_filename: one file name per
  // input line, one JSON object per output line.
  int parse_wheel_names(std::istream& in) {
    std::string line;
    while (std::getline(in, line)) {
      auto parsed = wheel::parse_wheel_filename(line);
      nlohmann::ordered_json row = {{"input", line}, {"ok", parsed.has_value()}};
      if (parsed) {
        nlohmann::ordered_json tags = nlohmann::ordered_json::array();
        for (const auto& t : parsed->tags)
          tags.push_back(t.str());
        row["name"] = parsed->canonical_name;
        row["version"] = parsed->version.normalized;
        row["build"] =
            parsed->build
                ? nlohmann::ordered_json::array({parsed->build->number, parsed->build->suffix})
                : nlohmann::ordered_json::array();
        row["tags"] = tags;
      } else {
        row["error"] = parsed.error().message;
      }
      // Invalid UTF-8 in hostile names must not stop the run: replace it in the output.
      out_ << row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    return kSuccess;
  }

  struct SourceVersion {
    std::optional<vcs::GitState> git;
    vcs::ResolvedVersion resolved;
  };

  // The version this checkout's wheels get, from the version file and git (vcs/).
  SourceVersion source_version(const LoadedMatrix& m) const {
    const matrix::VersionSource& policy = m.matrix.package.version;
    auto git = vcs::read_git_state(m.root, policy.tag_prefix);
    if (!git) throw CommandError{kConfigError, git.error().message};
    const char* ref = std::getenv("GITHUB_REF");
    auto resolved = vcs::resolve_version(
        {m.package_version, policy.file, policy, *git, ref ? std::string(ref) : std::string()});
    if (!resolved) throw CommandError{kConfigError, resolved.error().message};
    return {std::move(*git), std::move(*resolved)};
  }
  // What every build starts from: the version (and git state), --require-clean enforced, and
  // SOURCE_DATE_EPOCH: the caller's, else the commit's time, else 1980-01-01.
  struct BuildSource {
    std::string version;
    std::optional<vcs::GitState> git;
    std::int64_t source_date_epoch;
  };
  BuildSource build_source(const LoadedMatrix& m, bool require_clean) const {
    SourceVersion v = source_version(m);
    if (require_clean && v.git && v.git->dirty) {
      throw CommandError{
          kConfigError,
          fmt::format("--require-clean: the working tree has uncommitted changes ({}); commit "
                      "or stash them first",
                      text::join(v.git->dirty_paths, ", "))};
    }
    BuildSource source{v.resolved.version, std::move(v.git), wheel::source_date_epoch()};
    if (const char* given = std::getenv("SOURCE_DATE_EPOCH"); (!given || !*given) && source.git)
      source.source_date_epoch = source.git->commit_time;
    return source;
  }

  int version(const std::string& format, bool check_tag) {
    const LoadedMatrix m = load();
    const SourceVersion v = source_version(m);
    const matrix::VersionSource& policy = m.matrix.package.version;
    const bool tagged = v.resolved.kind == vcs::BuildKind::release_tag;
    if (check_tag && !tagged) {
      const char* ref = std::getenv("GITHUB_REF");
      throw CommandError{
          kConfigError,
          fmt::format("--check-tag: this is not a release tag build (GITHUB_REF {}; HEAD {}); "
                      "release builds run from a {}X.Y.Z tag",
                      ref && *ref ? ref : "unset",
                      v.git && v.git->tag && v.git->tag->distance == 0
                          ? "is at " + v.git->tag->name
                          : fmt::format("has no {}* tag", policy.tag_prefix),
                      policy.tag_prefix)};
    }
    nlohmann::ordered_json doc = {
        {"package", m.matrix.package.name},
        {"version", v.resolved.version},
        {"file_version", m.package_version},
        {"version_file", policy.file},
        {"release_tag", tagged ? nlohmann::ordered_json(v.resolved.tag) : nullptr},
        {"tag_origin", tagged ? nlohmann::ordered_json(v.resolved.tag_origin) : nullptr},
        {"git", nullptr}};
    if (v.git) {
      const vcs::GitState& g = *v.git;
      doc["git"] = {{"commit", g.commit},
                    {"commit_time", g.commit_time},
                    {"dirty", g.dirty},
                    {"dirty_paths", g.dirty_paths},
                    {"branch", g.detached ? nlohmann::ordered_json(nullptr)
                                          : nlohmann::ordered_json(g.branch)},
                    {"shallow", g.shallow},
                    {"nearest_tag", g.tag ? nlohmann::ordered_json(g.tag->name) : nullptr},
                    {"distance", g.tag ? nlohmann::ordered_json(g.tag->distance) : nullptr}};
    }
    if (format == "json") {
      out_ << json_text(doc, 2) << "\n";
      return kSuccess;
    }
    if (format == "github") {
      for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
               {"version", v.resolved.version},
               {"release_tag", tagged ? v.resolved.tag : ""},
               {"commit", v.git ? v.git->commit : ""}}) {
        if (auto set = github::set_output(name, value); !set) {
          throw CommandError{kUsageError, set.error().message};
        }
      }
      out_ << fmt::format("sagebuild: version={} written to $GITHUB_OUTPUT\n", v.resolved.version);
      return kSuccess;
    }
    if (format == "short") {
      out_ << v.resolved.version << "\n";
      return kSuccess;
    }
    std::vector<std::vector<std::string>> rows = {
        {"package", m.matrix.package.name},
        {"version", v.resolved.version},
        {"source", fmt::format("{} says {}", policy.file, m.package_version)},
        {"build",
         tagged ? fmt::format("release tag {} (from {})", v.resolved.tag, v.resolved.tag_origin)
                : "not a release tag"}};
    if (v.git) {
      const vcs::GitState& g = *v.git;
      rows.push_back({"commit", fmt::format("{}{}", g.commit,
                                            g.detached ? " (detached HEAD)" : " on " + g.branch)});
      rows.push_back({"tree", g.dirty ? "dirty: " + text::join(g.dirty_paths, ", ") : "clean"});
      rows.push_back(
          {"nearest tag", g.tag ? fmt::format("{}, {} commit{} before HEAD", g.tag->name,
                                              g.tag->distance, g.tag->distance == 1 ? "" : "s")
                                : fmt::format("none matching {}*{}", policy.tag_prefix,
                                              g.shallow ? " (shallow clone)" : "")});
    } else {
      rows.push_back({"commit", "not a git checkout"});
    }
    print_table({"", ""}, rows);
    return kSuccess;
  }

  int build(BuildFlags flags) {
    if (flags.env.empty() && flags.profile.empty() && flags.entries.empty()) {
      throw CommandError{kUsageError,
                         "say what to build: --profile NAME, --entry ID, or --env current"};
    }
    if (!flags.env.empty() && (!flags.profile.empty() || !flags.entries.empty())) {
      throw CommandError{kUsageError,
                         "--env current builds this environment's wheel; it does not take "
                         "--profile or --entry"};
    }
    if (flags.env.empty() && flags.check_reproducible) {
      throw CommandError{kUsageError, "--check-reproducible works with --env current"};
    }
    const LoadedMatrix m = load();
    std::vector<matrix::Entry> selected;
    if (flags.env.empty()) {
      selected = select_entries(m, flags);
      if (flags.options.dry_run && std::all_of(selected.begin(), selected.end(),
                                               [](const auto& e) { return e.os == "windows"; })) {
        std::vector<backend::MsvcEntryPlan> plans;
        for (const auto& e : selected)
          plans.push_back({e.id, e.wheel, e.cuda, m.matrix.package.build_command});
        backend::describe_msvc(plans, out_);
        return kSuccess;
      }
      check_buildable_here(selected, flags.options.backend);
    }

    BuildSource source = build_source(m, flags.require_clean);
    backend::BuildOptions options = flags.options;
    options.root = m.root;
    options.package_version = source.version;
    options.git = std::move(source.git);
    options.source_date_epoch = source.source_date_epoch;
    if (auto normalized = backend::normalize_build_options(options, flags.cuda_paths);
        !normalized) {
      throw CommandError{kUsageError, normalized.error().message};
    }
    if (!flags.env.empty()) {
      auto current = backend::probe_current_environment(m.matrix, flags.python, flags.arch_list,
                                                        options.package_version);
      if (!current) throw CommandError{kBuildFailure, current.error().message};
      if (!current->warning.empty()) out_ << "sagebuild: warning: " << current->warning << "\n";
      backend::use_current_environment(*current, options);
      if (flags.check_reproducible) {
        // Both builds compile everything themselves: a cached part would be compared with
        // itself.
        options.kernel_cache = false;
        options.force = true;
      }
      selected = {current->entry};
    }
    out_ << fmt::format("sagebuild: {} entr{} of {}, version {}, cache {}{}\n", selected.size(),
                        selected.size() == 1 ? "y" : "ies",
                        !flags.env.empty()      ? "this environment"
                        : flags.profile.empty() ? "the matrix"
                                                : "profile " + flags.profile,
                        options.package_version, options.cache.string(),
                        options.kernel_cache ? "" : " (kernels not cached: --no-cache)");
    if (options.dry_run) {
      if (options.backend == backend::Backend::docker) {
        backend::describe_docker(selected, options, out_);
      } else {
        backend::describe_entries(m.matrix, selected, options, out_);
      }
      return kSuccess;
    }
    const auto results =
        run_builds(m, selected, options, flags.env.empty() ? Reason::in_table : Reason::in_error);
    if (flags.check_reproducible)
      return check_reproducibility(m, selected.front(), options, results.front());
    return kSuccess;
  }

  // The entries a build names: a profile's (all, or those named), or entries named anywhere in
  // the matrix.
  std::vector<matrix::Entry> select_entries(const LoadedMatrix& m, const BuildFlags& flags) {
    std::vector<matrix::Entry> selected;
    std::vector<matrix::Entry> pool;
    std::vector<std::string> profiles = {flags.profile};
    if (flags.profile.empty()) profiles = m.matrix.profile_names();
    for (const std::string& name : profiles) {
      auto entries = matrix::expand_profile(m.matrix, name, {m.package_version, flags.platform});
      if (!entries) {
        if (!flags.profile.empty()) throw CommandError{kUsageError, entries.error().message};
        continue;
      }
      for (auto& e : *entries) {
        const bool seen = std::any_of(pool.begin(), pool.end(),
                                      [&](const matrix::Entry& p) { return p.id == e.id; });
        if (!seen) pool.push_back(std::move(e));
      }
    }
    if (flags.entries.empty()) {
      selected = pool;
    } else {
      std::vector<std::string> ids;
      for (const auto& e : pool)
        ids.push_back(e.id);
      for (const std::string& id : flags.entries) {
        auto it = std::find_if(pool.begin(), pool.end(),
                               [&](const matrix::Entry& e) { return e.id == id; });
        if (it == pool.end()) {
          throw CommandError{
              kUsageError,
              fmt::format("no entry '{}' in {}{}", id,
                          flags.profile.empty() ? "any profile" : "profile '" + flags.profile + "'",
                          text::did_you_mean(id, ids))};
        }
        selected.push_back(*it);
      }
    }
    if (selected.empty()) throw CommandError{kUsageError, "nothing to build"};
    return selected;
  }

  void check_buildable_here(const std::vector<matrix::Entry>& selected, backend::Backend how) {
    for (const auto& e : selected) {
      if (how == backend::Backend::docker && e.docker_platform.empty()) {
        throw CommandError{kUsageError,
                           fmt::format("{}: platform '{}' has no 'docker:' platform in "
                                       "matrix.yaml, so the Docker backend cannot build it",
                                       e.id, e.platform)};
      }
      if (e.os != "linux") {
        throw CommandError{
            kUsageError,
            fmt::format("{} is a {} entry: it builds on a {} runner (the MSVC backend), not "
                        "here (--dry-run shows its plan); pick --platform linux",
                        e.id, e.os, e.os)};
      }
    }
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
                                : stdout_is_terminal()      ? ProgressStyle::live
                                                            : ProgressStyle::plain;
    auto progress = make_progress(style, out_);
    const auto results =
        options.backend == backend::Backend::docker
            ? backend::build_entries_docker(m.matrix, selected, options, *progress, out_)
            : backend::build_entries(m.matrix, selected, options, *progress, out_);
    out_ << "\n" << backend::format_results(results);
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
      throw CommandError{kInterrupted,
                         fmt::format("interrupted: {} of {} entr{} finished; nothing unfinished "
                                     "reached {}",
                                     built, results.size(), results.size() == 1 ? "y" : "ies",
                                     options.dist.string())};
    }
    if (failed + verification > 0) {
      const std::string why = reason == Reason::in_error && results.size() == 1
                                  ? results.front().message
                                  : fmt::format("{} of {} entries failed; logs under build/logs/",
                                                failed + verification, results.size());
      throw CommandError{failed ? kBuildFailure : kVerificationFailure, why};
    }
    if (!skipped.empty()) {
      out_ << fmt::format(
          "sagebuild: skipped {} entr{} this machine lacks the toolchain of "
          "(--skip-unavailable):\n",
          skipped.size(), skipped.size() == 1 ? "y" : "ies");
      for (const auto* r : skipped)
        out_ << fmt::format("  {}: {}\n", r->id, r->message);
    }
    if (built == 0) {
      throw CommandError{kBuildFailure, fmt::format("no entry could be built on this machine "
                                                    "({} skipped)",
                                                    skipped.size())};
    }
    out_ << fmt::format("sagebuild: {} wheel{} in {}\n", built, built == 1 ? "" : "s",
                        dist.string());
    return results;
  }

  // Builds the same entry again in another directory and compares its wheel byte for byte with
  // the first; the second wheel never reaches dist/.
  int check_reproducibility(const LoadedMatrix& m, const matrix::Entry& entry,
                            backend::BuildOptions options, const backend::EntryResult& first) {
    out_ << "sagebuild: --check-reproducible: building it a second time\n";
    options.reproducibility_run = true;
    options.dist = m.root / "build" / "sagebuild" / "reproducibility";
    std::error_code ec;
    stdfs::remove_all(options.dist, ec);
    const auto again = run_builds(m, {entry}, options, Reason::in_error);
    auto compared = wheel::compare_wheels(first.wheel, again.front().wheel);
    if (!compared) throw CommandError{kBuildFailure, compared.error().message};
    if (compared->identical) {
      out_ << fmt::format("sagebuild: reproducible: the second build of {} is byte-identical\n",
                          first.wheel.filename().string());
      return kSuccess;
    }
    std::string lines;
    for (const auto& d : compared->differences) {
      lines += fmt::format("\n  {}{}", d.entry.empty() ? "" : d.entry + ": ", d.detail);
    }
    throw CommandError{
        kVerificationFailure,
        fmt::format("not reproducible: two builds of {} differ (second: {}):{}",
                    first.wheel.filename().string(), again.front().wheel.string(), lines)};
  }

  int release(github::ReleaseRequest request, const std::vector<std::string>& files,
              const NetworkFlags& network) {
    request.token = env_or({"GITHUB_TOKEN", "GH_TOKEN"});
    if (request.token.empty()) {
      throw CommandError{kUsageError, "no token: set GITHUB_TOKEN (or GH_TOKEN)"};
    }
    if (request.repo.empty()) request.repo = env_or({"GITHUB_REPOSITORY"});
    if (request.repo.empty() || request.repo.find('/') == std::string::npos) {
      throw CommandError{kUsageError,
                         "no repository: pass --repo owner/name (or set "
                         "GITHUB_REPOSITORY)"};
    }
    request.api_url = env_or({"GITHUB_API_URL"}, "https://api.github.com");
    network.apply(request.http, request.retry, err_);
    std::vector<stdfs::path> paths(files.begin(), files.end());
    auto result = github::upload_release_assets(
        request, paths, [this](const std::string& line) { out_ << "sagebuild: " << line << "\n"; });
    if (!result) throw CommandError{kPublishFailure, result.error().message};
    std::size_t failed = 0;
    for (const auto& a : result->assets)
      failed += a.outcome == github::AssetOutcome::failed;
    if (failed) {
      throw CommandError{kPublishFailure,
                         fmt::format("{} of {} asset{} not uploaded", failed, result->assets.size(),
                                     result->assets.size() == 1 ? "" : "s")};
    }
    out_ << fmt::format("sagebuild: release {} has all {} asset{}\n", request.tag,
                        result->assets.size(), result->assets.size() == 1 ? "" : "s");
    return kSuccess;
  }

  int publish(registry::PublishRequest request, const std::vector<std::string>& files,
              const NetworkFlags& network) {
    request.username = env_or({"SAGEBUILD_PUBLISH_USERNAME", "TWINE_USERNAME"});
    request.password = env_or({"SAGEBUILD_PUBLISH_PASSWORD", "TWINE_PASSWORD"});
    network.apply(request.http, request.retry, err_);
    std::vector<stdfs::path> paths(files.begin(), files.end());
    out_ << fmt::format("sagebuild: publishing {} file{} to {}\n", paths.size(),
                        paths.size() == 1 ? "" : "s", request.repository_url);
    const auto results = registry::publish_wheels(
        request, paths, [this](const std::string& line) { out_ << "sagebuild: " << line << "\n"; });
    std::size_t failed = 0;
    for (const auto& r : results)
      failed += r.outcome == registry::PublishOutcome::failed;
    if (failed) {
      throw CommandError{kPublishFailure,
                         fmt::format("{} of {} file{} not published", failed, results.size(),
                                     results.size() == 1 ? "" : "s")};
    }
    return kSuccess;
  }

  int index(const std::vector<std::string>& inputs, const std::string& site) {
    const std::vector<stdfs::path> wheels = wheel_files("index", inputs);
    std::vector<github::IndexedWheel> described;
    for (const auto& w : wheels) {
      auto d = github::describe_wheel(w);
      if (!d)
        throw CommandError{kUsageError,
                           fmt::format("cannot index {}: {}", w.string(), d.error().message)};
      described.push_back(std::move(*d));
    }
    auto summary = github::write_index(described, site);
    if (!summary) throw CommandError{kUsageError, summary.error().message};
    out_ << fmt::format(
        "sagebuild: indexed {} wheel{} into {}: simple/, per CUDA major {}, per variant {}\n",
        summary->wheels, summary->wheels == 1 ? "" : "s", site,
        text::join(summary->cuda_indexes, "/simple, ") + "/simple",
        text::join(summary->variants, "/simple, ") + "/simple");
    return kSuccess;
  }

  // Results files given, else build/results/*.json beside matrix.yaml.
  int summary(std::vector<std::string> files) {
    if (files.empty()) {
      const LoadedMatrix m = load();
      std::error_code ec;
      for (const auto& f : stdfs::directory_iterator(m.root / "build" / "results", ec)) {
        if (f.path().extension() == ".json") files.push_back(f.path().string());
      }
      std::sort(files.begin(), files.end());
      if (files.empty())
        throw CommandError{kUsageError, "no results: build/results/*.json is empty"};
    }
    std::vector<nlohmann::json> results;
    for (const std::string& file : files) {
      auto text = fs::read_file(file);
      if (!text) throw CommandError{kUsageError, text.error().message};
      auto doc = nlohmann::json::parse(*text, nullptr, false);
      if (doc.is_discarded() || !doc.is_object()) {
        throw CommandError{kUsageError, fmt::format("{} is not a results JSON object", file)};
      }
      results.push_back(std::move(doc));
    }
    const std::string markdown = github::summary_markdown(results);
    if (const char* path = std::getenv("GITHUB_STEP_SUMMARY"); path && *path) {
      auto written = fs::append_file(path, markdown);
      if (!written) throw CommandError{kUsageError, written.error().message};
      out_ << fmt::format("sagebuild: summary of {} entr{} appended to $GITHUB_STEP_SUMMARY\n",
                          results.size(), results.size() == 1 ? "y" : "ies");
    } else {
      out_ << markdown;
    }
    return kSuccess;
  }

  int list_checks(bool json) {
    if (json) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& c : wheel::check_catalog()) {
        list.push_back({{"id", c.id}, {"name", c.name}, {"summary", c.summary}, {"fix", c.fix}});
      }
      out_ << json_text(list, 2) << "\n";
      return kSuccess;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : wheel::check_catalog()) {
      rows.push_back({std::string(c.id), std::string(c.name), std::string(c.summary)});
    }
    print_table({"ID", "NAME", "CHECKS THAT"}, rows);
    return kSuccess;
  }

  std::vector<matrix::Entry> expand(const LoadedMatrix& m, const std::string& profile,
                                    const std::string& platform) const {
    auto entries = matrix::expand_profile(m.matrix, profile, {m.package_version, platform});
    if (!entries) throw CommandError{kUsageError, entries.error().message};
    return std::move(*entries);
  }

  int matrix(const std::string& profile, const std::string& platform, const std::string& format) {
    const LoadedMatrix m = load();
    const std::vector<matrix::Entry> entries = expand(m, profile, platform);
    nlohmann::ordered_json include = nlohmann::ordered_json::array();
    for (const auto& e : entries)
      include.push_back(entry_to_json(e));

    if (format == "json") {
      nlohmann::ordered_json doc = {{"profile", profile},
                                    {"platform", platform},
                                    {"package", m.matrix.package.name},
                                    {"version", m.package_version},
                                    {"count", entries.size()},
                                    {"include", include}};
      out_ << json_text(doc, 2) << "\n";
    } else if (format == "github") {
      if (entries.size() > kGithubMaxMatrixJobs) {
        throw CommandError{kConfigError,
                           fmt::format("profile '{}' has {} entries for platform '{}'; a GitHub "
                                       "Actions matrix runs at most {} jobs: split it with "
                                       "--platform or a smaller profile",
                                       profile, entries.size(), platform, kGithubMaxMatrixJobs)};
      }
      const nlohmann::ordered_json doc = {{"include", include}};
      for (const auto& [name, value] :
           {std::pair<std::string, std::string>{"matrix", json_text(doc)},
            {"count", std::to_string(entries.size())}}) {
        auto written = github::set_output(name, value);
        if (!written) throw CommandError{kUsageError, written.error().message};
      }
      out_ << fmt::format("sagebuild: wrote matrix ({} entr{}) and count to $GITHUB_OUTPUT\n",
                          entries.size(), entries.size() == 1 ? "y" : "ies");
    } else {
      print_entry_table(profile, platform, m.package_version, entries);
    }
    return kSuccess;
  }

  int bake(const std::string& profile, const std::string& output, backend::BakeOptions options) {
    const LoadedMatrix m = load();
    std::vector<backend::BakeGroup> groups;
    const std::vector<std::string> names =
        profile.empty() ? m.matrix.profile_names() : std::vector<std::string>{profile};
    for (const std::string& name : names) {
      auto entries = matrix::expand_profile(m.matrix, name, {m.package_version, "all"});
      if (!entries) throw CommandError{kUsageError, entries.error().message};
      groups.push_back({name, std::move(*entries)});
    }
    const nlohmann::ordered_json file = backend::make_bake_file(groups, options);
    if (file["target"].empty()) {
      throw CommandError{kUsageError,
                         fmt::format("profile '{}' has no entries that Docker can build (only "
                                     "platforms with 'docker:' in matrix.yaml; Windows wheels "
                                     "are built natively)",
                                     profile)};
    }
    const std::string text = json_text(file, 2) + "\n";
    if (output == "-") {
      out_ << text;
    } else {
      auto written = fs::write_file_atomic(output, text);
      if (!written) throw CommandError{kUsageError, written.error().message};
      err_ << fmt::format("sagebuild: wrote {} ({} targets)\n", output, file["target"].size());
    }
    return kSuccess;
  }

  int profiles(const std::string& format) {
    const LoadedMatrix m = load();
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    std::vector<std::vector<std::string>> rows;
    for (const auto& profile : m.matrix.profiles) {
      auto entries = expand(m, profile.name, "all");
      std::map<std::string, int> per_platform;
      for (const auto& e : entries)
        per_platform[e.platform]++;
      std::vector<std::string> counts;
      nlohmann::ordered_json count_json = nlohmann::ordered_json::object();
      for (const auto& platform : m.matrix.platforms) {
        if (per_platform.count(platform.name)) {
          counts.push_back(fmt::format("{} {}", platform.name, per_platform[platform.name]));
          count_json[platform.name] = per_platform[platform.name];
        }
      }
      list.push_back(
          {{"name", profile.name}, {"description", profile.description}, {"entries", count_json}});
      rows.push_back({profile.name, text::join(counts, ", "), profile.description});
    }
    if (format == "json") {
      out_ << json_text(list, 2) << "\n";
    } else {
      print_table({"PROFILE", "ENTRIES", "DESCRIPTION"}, rows);
    }
    return kSuccess;
  }

  int validate() {
    const LoadedMatrix m = load();
    std::set<std::string> ids;
    for (const auto& profile : m.matrix.profiles) {
      for (const auto& e : expand(m, profile.name, "all"))
        ids.insert(e.id);
    }
    out_ << fmt::format("{}: ok ({} {} {}, {} profiles, {} distinct entries)\n", m.display_name,
                        m.matrix.package.name, m.package_version, m.matrix.package.version.file,
                        m.matrix.profiles.size(), ids.size());
    return kSuccess;
  }

 private:
  static void check_known_check(const std::string& key) {
    for (const auto& c : wheel::check_catalog()) {
      if (std::string_view(c.id).starts_with(key) || c.name == key) return;
    }
    std::vector<std::string> names;
    for (const auto& c : wheel::check_catalog())
      names.emplace_back(c.name);
    throw CommandError{kUsageError, fmt::format("unknown check '{}'{}; see --list-checks", key,
                                                text::did_you_mean(key, names))};
  }

  // Every problem up to kMaxShownProblems; a file with thousands (a generated one gone wrong)
  // gets the first ones and a count, not pages of repetition.
  static constexpr std::size_t kMaxShownProblems = 50;

  void report_diagnostics(const Diagnostics& diagnostics, std::string_view source) const {
    const bool annotate = running_in_github_actions();
    for (std::size_t i = 0; i < diagnostics.size() && i < kMaxShownProblems; ++i) {
      const Diagnostic& d = diagnostics[i];
      err_ << render(d, source);
      if (annotate) {
        // Annotations go to stdout, where the runner reads workflow commands.
        out_ << error_annotation(d.file, d.location.line, d.location.column, d.message) << "\n";
      }
    }
    if (diagnostics.size() > kMaxShownProblems) {
      err_ << fmt::format("... and {} more problems like these\n",
                          diagnostics.size() - kMaxShownProblems);
    }
  }

  void print_entry_table(const std::string& profile, const std::string& platform,
                         const std::string& version, const std::vector<matrix::Entry>& entries) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& e : entries) {
      rows.push_back({e.id, e.python.str(), e.torch.str(), e.cuda_full, e.arch_list(), e.wheel});
    }
    out_ << fmt::format("profile '{}', platform {}, version {}: {} entr{}\n", profile, platform,
                        version, entries.size(), entries.size() == 1 ? "y" : "ies");
    print_table({"ID", "PYTHON", "TORCH", "CUDA", "ARCHS", "WHEEL"}, rows);
  }

  void print_table(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> widths(header.size());
    for (std::size_t c = 0; c < header.size(); ++c)
      widths[c] = header[c].size();
    for (const auto& row : rows) {
      for (std::size_t c = 0; c < row.size(); ++c)
        widths[c] = std::max(widths[c], row[c].size());
    }
    auto print_row = [&](const std::vector<std::string>& row) {
      std::string line;
      for (std::size_t c = 0; c < row.size(); ++c) {
        line += row[c];
        if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
      }
      out_ << line << "\n";
    };
    // A key/value listing passes an empty header: no header line then.
    if (std::any_of(header.begin(), header.end(), [](const auto& h) { return !h.empty(); }))
      print_row(header);
    for (const auto& row : rows)
      print_row(row);
  }

  std::ostream& out_;
  std::ostream& err_;
};

// CLI11's parse errors in sagebuild's voice: an unknown command or option is named, with the
// closest known one, and every message says which command it concerns.
std::string explain_parse_error(const CLI::App& app, int argc, const char* const* argv,
                                const CLI::ParseError& e) {
  std::vector<std::string> commands;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); }))
    commands.push_back(sub->get_name());
  // The command: the first word that is not an option (or the value of --matrix).
  const CLI::App* command = nullptr;
  int at = 1;
  for (; at < argc; ++at) {
    const std::string_view word = argv[at];
    if (word == "--matrix") {
      ++at;
      continue;
    }
    if (word.starts_with("-")) continue;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == word) command = sub;
    }
    if (!command) {
      return fmt::format("unknown command '{}'{}; commands: {}", word,
                         text::did_you_mean(word, commands), text::join(commands, ", "));
    }
    break;
  }
  if (!command) {
    return fmt::format("say which command to run: {} (sagebuild --help)",
                       text::join(commands, ", "));
  }
  // An option the command does not have.
  std::vector<std::string> options;
  for (const CLI::Option* o : command->get_options()) {
    for (const std::string& name : o->get_lnames())
      options.push_back("--" + name);
    for (const std::string& name : o->get_snames())
      options.push_back("-" + name);
  }
  for (int i = at + 1; i < argc; ++i) {
    std::string word = argv[i];
    if (!word.starts_with("-") || word == "-" || word == "--") continue;
    word = word.substr(0, word.find('='));
    if (std::find(options.begin(), options.end(), word) == options.end()) {
      return fmt::format("{}: unknown option '{}'{}; see sagebuild {} --help", command->get_name(),
                         word, text::did_you_mean(word, options), command->get_name());
    }
  }
  std::string what = e.what();
  if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  return fmt::format("{}: {}; see sagebuild {} --help", command->get_name(), what,
                     command->get_name());
}

int run_checked(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Commands commands(out, err);
  CLI::App app{
      "sagebuild: builds, verifies and ships the SageAttention CUDA wheels described "
      "by matrix.yaml",
      "sagebuild"};
  app.set_version_flag("--version", std::string("sagebuild ") + SAGEBUILD_VERSION);
  app.footer(kExitCodeHelp);
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--matrix", commands.matrix_option,
                 "matrix.yaml to read (default: the nearest one in this directory or above)")
      ->envname("SAGEBUILD_MATRIX");

  std::string profile, platform = "all", format = "table", output = "-";
  backend::BakeOptions bake_options;

  CLI::App* matrix_cmd = app.add_subcommand("matrix", "Expand a profile into build entries");
  matrix_cmd->add_option("--profile", profile, "profile to expand (see `sagebuild profiles`)")
      ->required();
  matrix_cmd
      ->add_option("--platform", platform,
                   "a platform of matrix.yaml, an os (linux, windows), or all")
      ->capture_default_str();
  matrix_cmd
      ->add_option("--format", format,
                   "table for people, json for tools, github to append matrix=<json> to "
                   "$GITHUB_OUTPUT")
      ->check(CLI::IsMember({"table", "json", "github"}))
      ->capture_default_str();

  CLI::App* bake_cmd =
      app.add_subcommand("bake", "Write the Docker Bake JSON file for one profile or all");
  bake_cmd->add_option("--profile", profile, "profile to write (default: every profile)");
  bake_cmd->add_option("-o,--output", output, "file to write, or - for standard output")
      ->capture_default_str();
  bake_cmd->add_option("--dockerfile", bake_options.dockerfile, "Dockerfile of every target")
      ->capture_default_str();
  bake_cmd->add_option("--output-dir", bake_options.output_dir, "where Bake puts the wheels")
      ->capture_default_str();

  CLI::App* profiles_cmd = app.add_subcommand("profiles", "List the profiles of matrix.yaml");
  profiles_cmd->add_option("--format", format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  app.add_subcommand("validate", "Check matrix.yaml and report every problem");

  std::vector<std::string> wheels;
  wheel::VerifyOptions verify_options;
  std::string expect_profile, expect_entry;
  bool json = false, list = false;
  CLI::App* verify_cmd = app.add_subcommand(
      "verify-wheel", "Check wheels before publishing: name, archive, RECORD, metadata, binaries");
  verify_cmd->add_option("wheels", wheels, "wheel files, or directories of them");
  // One value per occurrence, so that a wheel path after the option is never taken for a check;
  // the value is a comma-separated list ("--select A,R --select B004").
  verify_cmd
      ->add_option("--select", verify_options.select,
                   "run only these checks: ids, names or id prefixes like R, comma-separated")
      ->expected(1)
      ->allow_extra_args(false);
  verify_cmd->add_option("--ignore", verify_options.ignore, "skip these checks (comma-separated)")
      ->expected(1)
      ->allow_extra_args(false);
  verify_cmd->add_option("--expect-profile", expect_profile,
                         "each wheel must be one of this profile's entries");
  verify_cmd->add_option("--expect-entry", expect_entry, "the wheel must be this matrix entry");
  verify_cmd->add_flag("--json", json, "print a JSON report");
  bool import_test = false;
  backend::InstallCheckOptions import_options;
  verify_cmd->add_flag("--import-test", import_test,
                       "install each wheel into a fresh venv of its Python with its torch, and "
                       "import it (I001)");
  verify_cmd->add_option("--import-python", import_options.python,
                         "for --import-test: an interpreter that already has torch; the venv "
                         "uses its site-packages and installs only the wheel");
  verify_cmd->add_option("--threads", verify_options.threads,
                         "reader threads (default: all cores)");
  verify_cmd->add_flag("--list-checks", list, "list the checks and exit");

  BuildFlags build_flags;
  CLI::App* build_cmd = app.add_subcommand(
      "build",
      "Build matrix entries (--profile, --entry) or this environment (--env current) into "
      "verified wheels in dist/");
  build_cmd
      ->add_option("--env", build_flags.env,
                   "current: the active interpreter, its torch and the CUDA found")
      ->check(CLI::IsMember({"current"}));
  build_cmd->add_option("--profile", build_flags.profile, "build this profile's entries");
  build_cmd->add_option("--entry", build_flags.entries,
                        "build only this entry (an id from `sagebuild matrix`); repeatable");
  build_cmd->add_option("--platform", build_flags.platform, "platform of the entries")
      ->capture_default_str();
  build_cmd->add_option("-j,--jobs", build_flags.options.jobs, "entries built at once")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  build_cmd
      ->add_option("--backend", build_flags.backend,
                   "native (here) or docker (docker buildx bake of docker/Dockerfile.linux)")
      ->check(CLI::IsMember({"native", "docker"}))
      ->capture_default_str();
  build_cmd->add_flag("--dry-run", build_flags.options.dry_run,
                      "print each entry's toolchain, commands and environment; build nothing");
  build_cmd->add_flag("--force", build_flags.options.force, "rebuild wheels that are up to date");
  build_cmd->add_option("--cache-dir", build_flags.options.cache,
                        "environments, toolkits and kernels (default: $SAGEBUILD_CACHE_DIR, "
                        "else $XDG_CACHE_HOME/sagebuild, else ~/.cache/sagebuild)");
  build_cmd->add_flag_callback(
      "--no-cache", [&build_flags] { build_flags.options.kernel_cache = false; },
      "compile the kernels for every entry instead of using the kernel cache");
  build_cmd->add_flag("--skip-unavailable", build_flags.options.skip_unavailable,
                      "skip entries whose Python or CUDA toolkit this machine lacks, saying how "
                      "to get them, instead of failing");
  build_cmd->add_flag_callback(
      "--no-import-test", [&build_flags] { build_flags.options.import_test = false; },
      "skip installing and importing each wheel in a fresh venv");
  build_cmd->add_option("--torch-index-url", build_flags.options.torch.index_url,
                        "where torch comes from (default: pip's configured index)");
  build_cmd->add_option("--torch-find-links", build_flags.options.torch.find_links,
                        "a directory or URL of torch wheels (pip --find-links)");
  build_cmd->add_option("--python-env", build_flags.options.torch.existing,
                        "an interpreter whose environment has torch: entries of its Python and "
                        "torch build there; repeatable");
  build_cmd->add_option("--cuda-path", build_flags.cuda_paths,
                        "X.Y=DIR: the CUDA X.Y toolkit is in DIR; repeatable");
  build_cmd
      ->add_option("--python", build_flags.python,
                   "--env current: interpreter whose torch to build against")
      ->capture_default_str();
  build_cmd->add_option("--dist", build_flags.options.dist, "where verified wheels go")
      ->capture_default_str();
  build_cmd->add_option(
      "--arch-list", build_flags.arch_list,
      "--env current: CUDA architectures (TORCH_CUDA_ARCH_LIST form; default: the entry's)");
  build_cmd->add_flag("--require-clean", build_flags.require_clean,
                      "refuse to build from a working tree with uncommitted changes");
  build_cmd->add_flag("--check-reproducible", build_flags.check_reproducible,
                      "build twice and require byte-identical wheels");

  std::string version_format = "text";
  bool check_tag = false;
  CLI::App* version_cmd = app.add_subcommand(
      "version", "The version this checkout's wheels get, and what git says about the checkout");
  version_cmd
      ->add_option("--format", version_format,
                   "text, short (the version alone), json, or github ($GITHUB_OUTPUT)")
      ->check(CLI::IsMember({"text", "short", "json", "github"}))
      ->capture_default_str();
  version_cmd->add_flag("--check-tag", check_tag,
                        "fail unless this is a release tag build whose tag equals the version");

  github::ReleaseRequest release_request;
  std::vector<std::string> release_files;
  std::string notes_file;
  NetworkFlags network;
  CLI::App* release_cmd = app.add_subcommand(
      "release", "Upload wheels to the GitHub release of a tag (created when missing)");
  release_cmd->add_option("files", release_files, "wheels (or any files) to attach")
      ->required()
      ->check(CLI::ExistingFile);
  release_cmd->add_option("--tag", release_request.tag, "the release's tag, e.g. v2.2.0")
      ->required();
  release_cmd->add_option("--repo", release_request.repo,
                          "owner/name (default: $GITHUB_REPOSITORY)");
  release_cmd->add_option("--title", release_request.title, "release name (default: the tag)");
  release_cmd->add_option("--notes", release_request.notes, "release notes, for a new release");
  release_cmd->add_option("--notes-file", notes_file, "release notes from a file")
      ->check(CLI::ExistingFile);
  release_cmd->add_flag("--draft", release_request.draft, "create the release as a draft");
  release_cmd->add_flag("--clobber", release_request.clobber,
                        "replace assets of the same name whose content differs");
  network.add_to(release_cmd);

  registry::PublishRequest publish_request;
  std::vector<std::string> publish_files;
  CLI::App* publish_cmd = app.add_subcommand(
      "publish", "Upload wheels to a PyPI-compatible registry (twine's upload API)");
  publish_cmd->add_option("files", publish_files, "wheels to upload")
      ->required()
      ->check(CLI::ExistingFile);
  publish_cmd
      ->add_option("--repository-url", publish_request.repository_url, "the registry's upload URL")
      ->required();
  publish_cmd->add_flag("--allow-local-versions", publish_request.allow_local_versions,
                        "upload versions with a +local label (PyPI refuses them)");
  network.add_to(publish_cmd);

  std::vector<std::string> index_inputs;
  std::string index_site = "site";
  CLI::App* index_cmd = app.add_subcommand(
      "index",
      "Write a static PEP 503/691 package index, one per torch/CUDA variant plus a combined one");
  index_cmd->add_option("wheels", index_inputs, "wheel files or directories of them")->required();
  index_cmd->add_option("-o,--out", index_site, "the site directory to (re)write")
      ->capture_default_str();

  std::vector<std::string> summary_files;
  CLI::App* summary_cmd = app.add_subcommand(
      "summary", "Markdown of build results for $GITHUB_STEP_SUMMARY (stdout when unset)");
  summary_cmd->add_option("results", summary_files,
                          "results JSON files (default: build/results/*.json)");

  // Hidden: the filename parser alone, for the differential tests (tests/wheels/).
  CLI::App* names_cmd = app.add_subcommand("parse-wheel-names", "");
  names_cmd->group("");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err) == 0 ? kSuccess : kUsageError;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err) == 0 ? kSuccess : kUsageError;
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err) == 0 ? kSuccess : kUsageError;
  } catch (const CLI::ParseError& e) {
    throw CommandError{kUsageError, explain_parse_error(app, argc, argv, e)};
  }

  if (matrix_cmd->parsed()) return commands.matrix(profile, platform, format);
  if (bake_cmd->parsed()) return commands.bake(profile, output, bake_options);
  if (profiles_cmd->parsed()) return commands.profiles(format);
  if (names_cmd->parsed()) return commands.parse_wheel_names(std::cin);
  if (index_cmd->parsed()) return commands.index(index_inputs, index_site);
  if (summary_cmd->parsed()) return commands.summary(summary_files);
  if (build_cmd->parsed()) {
    build_flags.options.backend =
        build_flags.backend == "docker" ? backend::Backend::docker : backend::Backend::native;
    return commands.build(std::move(build_flags));
  }
  if (version_cmd->parsed()) return commands.version(version_format, check_tag);
  if (release_cmd->parsed()) {
    if (!notes_file.empty()) {
      auto notes = fs::read_file(notes_file);
      if (!notes) throw CommandError{kUsageError, notes.error().message};
      release_request.notes = *notes;
    }
    return commands.release(release_request, release_files, network);
  }
  if (publish_cmd->parsed()) return commands.publish(publish_request, publish_files, network);
  if (verify_cmd->parsed()) {
    if (list) return commands.list_checks(json);
    if (wheels.empty())
      throw CommandError{kUsageError, "verify-wheel needs at least one wheel file"};
    const bool install = import_test || !import_options.python.empty();
    return commands.verify_wheel(wheels, verify_options, expect_profile, expect_entry, json,
                                 install ? std::optional(import_options) : std::nullopt);
  }
  return commands.validate();
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    return run_checked(argc, argv, out, err);
  } catch (const CommandError& e) {
    err << "sagebuild: error: " << e.message << "\n";
    return e.code;
  } catch (const std::exception& e) {
    err << "sagebuild: internal error: " << e.what() << " (please report this)\n";
    return kInternalError;
  } catch (...) {
    err << "sagebuild: internal error (please report this)\n";
    return kInternalError;
  }
}

}  // namespace sagebuild::cli
