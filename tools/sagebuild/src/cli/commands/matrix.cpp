#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/entry_json.h"
#include "github/output.h"
#include "util/json_text.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

// GitHub Actions allows at most this many jobs from one matrix.
constexpr std::size_t kGithubMaxMatrixJobs = 256;

class MatrixCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("--profile", profile_, "profile to expand (see `sagebuild profiles`)")
        ->required();
    cmd.add_option("--platform", platform_,
                   "a platform of matrix.yaml, an os (linux, windows), or all")
        ->capture_default_str();
    cmd.add_option("--format", format_,
                   "table for people, json for tools, github to append matrix=<json> to "
                   "$GITHUB_OUTPUT")
        ->check(CLI::IsMember({"table", "json", "github"}))
        ->capture_default_str();
  }

  int run() override { return matrix(profile_, platform_, format_); }

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

  std::string profile_, platform_ = "all", format_ = "table";
};

}  // namespace

std::unique_ptr<Command> make_matrix_command(const Context& context) {
  return std::make_unique<MatrixCommand>(context);
}

}  // namespace sagebuild::cli
