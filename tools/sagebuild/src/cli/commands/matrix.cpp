#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/entry_json.h"
#include "github/output.h"
#include "matrix/diff.h"
#include "matrix/loader.h"
#include "util/json_text.h"
#include "util/text.h"
#include "vcs/git.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

// GitHub Actions allows at most this many jobs from one matrix.
constexpr std::size_t kGithubMaxMatrixJobs = 256;

class MatrixCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("--profile", profile_,
                   "profile to expand (see `sagebuild profiles`); required without diff");
    cmd.add_option("--platform", platform_,
                   "a platform of matrix.yaml, an os (linux, windows), or all")
        ->capture_default_str();
    cmd.add_option("--format", format_,
                   "table for people, json for tools, github to append matrix=<json> to "
                   "$GITHUB_OUTPUT")
        ->check(CLI::IsMember({"table", "json", "github"}))
        ->capture_default_str();
    define_diff(cmd);
  }

  // A subcommand, so that `sagebuild matrix diff` reads as what it does.
  void define_diff(CLI::App& cmd) {
    diff_ = cmd.add_subcommand("diff",
                               "the entries each profile gains or loses against matrix.yaml at a "
                               "git revision");
    diff_->add_option("revision", revision_, "a git revision: commit, tag, branch, HEAD~3")
        ->capture_default_str();
    diff_->add_option("--format", diff_format_, "table for people, json for tools")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
  }

  int run() override {
    if (diff_ && diff_->parsed()) return diff(revision_, diff_format_);
    if (profile_.empty()) {
      throw CommandError{
          ErrorKind::usage,
          "matrix needs --profile NAME (see `sagebuild profiles`), or `matrix diff`"};
    }
    return matrix(profile_, platform_, format_);
  }

 private:
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
      log_.result("{}\n", json_text(doc, 2));
    } else if (format == "github") {
      if (entries.size() > kGithubMaxMatrixJobs) {
        throw CommandError{ErrorKind::config,
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
        if (!written) throw CommandError(written.error().as(ErrorKind::usage));
      }
      log_.result("sagebuild: wrote matrix ({} entr{}) and count to $GITHUB_OUTPUT\n",
                  entries.size(), entries.size() == 1 ? "y" : "ies");
    } else {
      print_entry_table(profile, platform, m.package_version, entries);
    }
    return kSuccess;
  }

  int diff(const std::string& revision, const std::string& format) {
    const LoadedMatrix now = load();
    const stdfs::path path =
        matrix_option.empty() ? now.root / "matrix.yaml" : stdfs::path(matrix_option);
    auto text = vcs::read_file_at_revision(path, revision);
    if (!text) throw CommandError(text.error().as(ErrorKind::usage));
    const std::string shown = fmt::format("{}@{}", now.display_name, revision);
    matrix::LoadResult old = matrix::load_matrix(*text, shown);
    if (!old.matrix) {
      report_diagnostics(old.diagnostics, *text);
      throw CommandError{ErrorKind::config, fmt::format("{} does not load ({} problem{})", shown,
                                                        old.diagnostics.size(),
                                                        old.diagnostics.size() == 1 ? "" : "s")};
    }
    const auto diffs = matrix::diff_profiles(*old.matrix, now.matrix, {now.package_version, "all"});
    if (format == "json") {
      nlohmann::ordered_json doc = nlohmann::ordered_json::array();
      for (const auto& d : diffs) {
        doc.push_back({{"profile", d.profile},
                       {"state", d.state == matrix::ProfileDiff::State::added     ? "added"
                                 : d.state == matrix::ProfileDiff::State::removed ? "removed"
                                                                                  : "changed"},
                       {"before", d.before},
                       {"after", d.after},
                       {"gained", d.gained},
                       {"lost", d.lost},
                       {"rebuilt", d.rebuilt}});
      }
      log_.result("{}\n", json_text(doc, 2));
      return kSuccess;
    }
    std::vector<std::string> unchanged;
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : diffs) {
      if (d.empty()) {
        unchanged.push_back(d.profile);
        continue;
      }
      const char* state = d.state == matrix::ProfileDiff::State::added     ? " (new)"
                          : d.state == matrix::ProfileDiff::State::removed ? " (removed)"
                                                                           : "";
      rows.push_back({d.profile + state, std::to_string(d.before), std::to_string(d.after),
                      fmt::format("+{}", d.gained.size()), fmt::format("-{}", d.lost.size()),
                      std::to_string(d.rebuilt.size())});
    }
    log_.result("{} against {}: {} profile{} changed\n", now.display_name, shown, rows.size(),
                rows.size() == 1 ? "" : "s");
    if (!rows.empty())
      print_table({"PROFILE", "BEFORE", "AFTER", "GAINED", "LOST", "REBUILT"}, rows);
    for (const auto& d : diffs) {
      if (d.empty()) continue;
      log_.result("{}:\n", d.profile);
      for (const auto& id : d.gained)
        log_.result("  + {}\n", id);
      for (const auto& id : d.lost)
        log_.result("  - {}\n", id);
      for (const auto& line : d.rebuilt)
        log_.result("  ~ {}\n", line);
    }
    if (!unchanged.empty()) log_.result("unchanged: {}\n", text::join(unchanged, ", "));
    return kSuccess;
  }

  std::string profile_, platform_ = "all", format_ = "table";
  CLI::App* diff_ = nullptr;
  std::string revision_ = "HEAD", diff_format_ = "table";
};

}  // namespace

std::unique_ptr<Command> make_matrix_command(const Context& context) {
  return std::make_unique<MatrixCommand>(context);
}

}  // namespace sagebuild::cli
