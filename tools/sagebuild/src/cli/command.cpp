#include "cli/command.h"

#include <algorithm>

#include <fmt/format.h>

#include "backend/wheel_finish.h"
#include "cli/terminal.h"
#include "github/output.h"
#include "matrix/loader.h"
#include "matrix/package_version.h"
#include "util/fs.h"
#include "util/text.h"
#include "wheel/zip_writer.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

// matrix.yaml is a few KiB; a file past this is not one (and /dev/zero never ends). At this size
// it still loads and validates in a few tenths of a second (tests/robustness_check.py).
constexpr std::size_t kMaxMatrixBytes = 1u << 20;

}  // namespace

LoadedMatrix Command::load() const {
  stdfs::path path = matrix_option;
  if (path.empty()) {
    const stdfs::path dir = fs::find_upwards(stdfs::current_path(), "matrix.yaml");
    if (dir.empty()) {
      throw CommandError{ErrorKind::config,
                         "no matrix.yaml in this directory or above; run sagebuild in the "
                         "repository or pass --matrix FILE"};
    }
    path = dir / "matrix.yaml";
  }
  std::error_code ec;
  const stdfs::path relative = stdfs::relative(path, stdfs::current_path(), ec);
  // Relative paths with '/' on every platform: the same messages on Windows, and the form
  // GitHub's annotations (file=...) take.
  const std::string display = (!ec && !relative.empty() && !relative.string().starts_with(".."))
                                  ? relative.generic_string()
                                  : path.string();
  auto text = fs::read_file(path, kMaxMatrixBytes);
  if (!text) throw CommandError(text.error().as(ErrorKind::config));

  matrix::LoadResult result = matrix::load_matrix(*text, display);
  if (!result.matrix) {
    report_diagnostics(result.diagnostics, *text);
    throw CommandError{ErrorKind::config,
                       fmt::format("{} has {} problem{}", display, result.diagnostics.size(),
                                   result.diagnostics.size() == 1 ? "" : "s")};
  }
  LoadedMatrix loaded{std::move(*result.matrix), stdfs::absolute(path).parent_path(), display, ""};
  auto version = matrix::read_package_version(loaded.root, loaded.matrix.package.version);
  if (!version) {
    report_diagnostics(
        {{display, loaded.matrix.package.version.location, version.error().message, ""}}, *text);
    throw CommandError{ErrorKind::config, "cannot determine the package version"};
  }
  loaded.package_version = *version;
  return loaded;
}

void Command::add_matrix_expectations(const LoadedMatrix& m, wheel::VerifyOptions& options) {
  wheel::KnownVersions known;
  for (const auto& t : m.matrix.torch)
    known.torch.push_back(t.version);
  for (const auto& c : m.matrix.cuda)
    known.cuda.push_back(c.version);
  options.known = known;
  for (const auto& e : matrix::expand_all_profiles(m.matrix, {m.package_version, "all"}))
    options.known_entries.push_back(backend::expected_build(e));
}

std::optional<LoadedMatrix> Command::load_if_present() const {
  if (matrix_option.empty() && fs::find_upwards(stdfs::current_path(), "matrix.yaml").empty()) {
    return std::nullopt;
  }
  return load();
}

std::vector<matrix::Entry> Command::expand(const LoadedMatrix& m, const std::string& profile,
                                           const std::string& platform) const {
  auto entries = matrix::expand_profile(m.matrix, profile, {m.package_version, platform});
  if (!entries) throw CommandError(entries.error().as(ErrorKind::usage));
  return std::move(*entries);
}

Command::SourceVersion Command::source_version(const LoadedMatrix& m) const {
  const matrix::VersionSource& policy = m.matrix.package.version;
  auto git = vcs::read_git_state(m.root, policy.tag_prefix);
  if (!git) throw CommandError(git.error().as(ErrorKind::config));
  const char* ref = std::getenv("GITHUB_REF");
  auto resolved = vcs::resolve_version(
      {m.package_version, policy.file, policy, *git, ref ? std::string(ref) : std::string()});
  if (!resolved) throw CommandError(resolved.error().as(ErrorKind::config));
  return {std::move(*git), std::move(*resolved)};
}

Command::BuildSource Command::build_source(const LoadedMatrix& m, bool require_clean) const {
  SourceVersion v = source_version(m);
  if (require_clean && v.git && v.git->dirty) {
    throw CommandError{
        ErrorKind::config,
        fmt::format("--require-clean: the working tree has uncommitted changes ({}); commit "
                    "or stash them first",
                    text::join(v.git->dirty_paths, ", "))};
  }
  BuildSource source{v.resolved.version, std::move(v.git), wheel::source_date_epoch()};
  if (const char* given = std::getenv("SOURCE_DATE_EPOCH"); (!given || !*given) && source.git)
    source.source_date_epoch = source.git->commit_time;
  return source;
}

void Command::report_diagnostics(const Diagnostics& diagnostics, std::string_view source) const {
  const bool annotate = running_in_github_actions();
  for (std::size_t i = 0; i < diagnostics.size() && i < kMaxShownProblems; ++i) {
    const Diagnostic& d = diagnostics[i];
    log_.error("{}", render(d, source));
    if (annotate) {
      // Annotations go to stdout, where the runner reads workflow commands.
      log_.result("{}\n", error_annotation(d.file, d.location.line, d.location.column, d.message));
    }
  }
  if (diagnostics.size() > kMaxShownProblems) {
    log_.error("... and {} more problems like these\n", diagnostics.size() - kMaxShownProblems);
  }
}

void Command::print_table(const std::vector<std::string>& header,
                          const std::vector<std::vector<std::string>>& rows) const {
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
    log_.result("{}\n", line);
  };
  // A key/value listing passes an empty header: no header line then.
  if (std::any_of(header.begin(), header.end(), [](const auto& h) { return !h.empty(); }))
    print_row(header);
  for (const auto& row : rows)
    print_row(row);
}

void Command::print_entry_table(const std::string& profile, const std::string& platform,
                                const std::string& version,
                                const std::vector<matrix::Entry>& entries) const {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : entries) {
    // A py3-none wheel serves every Python; the one that builds it is a detail of the build.
    rows.push_back({e.id, matrix::every_python(e.abi) ? "any" : e.python.str(), e.torch.str(),
                    e.cuda_full, e.arch_list(), backend::identity_of(e).file_name});
  }
  log_.result("profile '{}', platform {}, version {}: {} entr{}\n", profile, platform, version,
              entries.size(), entries.size() == 1 ? "y" : "ies");
  print_table({"ID", "PYTHON", "TORCH", "CUDA", "ARCHS", "WHEEL"}, rows);
}

std::vector<stdfs::path> Command::wheel_files(const std::string& command,
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
        throw CommandError{
            ErrorKind::usage,
            fmt::format("{}: no wheels (*.whl) in the directory {}", command, input)};
      }
      std::sort(found.begin(), found.end());
      wheels.insert(wheels.end(), found.begin(), found.end());
    } else if (stdfs::is_regular_file(input, ec)) {
      wheels.emplace_back(input);
    } else {
      throw CommandError{ErrorKind::usage,
                         fmt::format("{}: no such wheel or directory: {}", command, input)};
    }
  }
  if (wheels.empty()) throw CommandError{ErrorKind::usage, command + ": no wheels given"};
  return wheels;
}

// The entries a build names: a profile's (all, or those named), or entries named anywhere in
// the matrix.
std::vector<matrix::Entry> Command::select_entries(const LoadedMatrix& m,
                                                   const std::string& profile,
                                                   const std::vector<std::string>& ids_given,
                                                   const std::string& platform) const {
  std::vector<matrix::Entry> selected;
  const std::vector<matrix::Entry> pool =
      profile.empty() ? matrix::expand_all_profiles(m.matrix, {m.package_version, platform})
                      : expand(m, profile, platform);
  if (ids_given.empty()) {
    selected = pool;
  } else {
    std::vector<std::string> ids;
    for (const auto& e : pool)
      ids.push_back(e.id);
    for (const std::string& id : ids_given) {
      auto it = std::find_if(pool.begin(), pool.end(),
                             [&](const matrix::Entry& e) { return e.id == id; });
      if (it == pool.end()) {
        throw CommandError{
            ErrorKind::usage,
            fmt::format("no entry '{}' in {}{}", id,
                        profile.empty() ? "any profile" : "profile '" + profile + "'",
                        text::did_you_mean(id, ids))};
      }
      selected.push_back(*it);
    }
  }
  if (selected.empty()) throw CommandError{ErrorKind::usage, "nothing to build"};
  return selected;
}

std::string env_or(std::initializer_list<const char*> names, std::string fallback) {
  for (const char* name : names) {
    if (const char* v = std::getenv(name); v && *v) return v;
  }
  return fallback;
}

}  // namespace sagebuild::cli
