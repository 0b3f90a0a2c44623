#include "github/summary.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/build_results.h"
#include "cli/commands/commands.h"
#include "util/fs.h"
#include "util/json_text.h"
#include "util/secrets.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class SummaryCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("results", files_, "results JSON files (default: build/results/*.json)");
  }

  int run() override { return summary(files_); }

 private:
  // Results files given, else those of the latest build (build/last-run.json names its entries).
  int summary(std::vector<std::string> files) {
    if (files.empty()) {
      // The latest build's entries (build/last-run.json), not whatever earlier runs left.
      const LoadedMatrix m = load();
      const stdfs::path dir = m.root / "build" / "results";
      if (const auto last = backend::read_last_run(m.root)) {
        for (const std::string& id : *last) {
          std::error_code ec;
          const stdfs::path file = backend::results_file(m.root, id);
          if (stdfs::is_regular_file(file, ec)) files.push_back(file.string());
        }
      } else {
        std::error_code ec;
        for (const auto& f : stdfs::directory_iterator(dir, ec)) {
          if (f.path().extension() == ".json") files.push_back(f.path().string());
        }
        std::sort(files.begin(), files.end());
      }
      if (files.empty()) {
        throw CommandError{ErrorKind::usage,
                           "no results: the last build recorded none in build/results/"};
      }
    }
    std::vector<nlohmann::json> results;
    for (const std::string& file : files) {
      auto text = fs::read_file(file);
      if (!text) throw CommandError(text.error().as(ErrorKind::usage));
      auto doc = parse_json_bounded(*text);
      if (doc.is_discarded() || !doc.is_object()) {
        throw CommandError{ErrorKind::usage, fmt::format("{} is not a results JSON object", file)};
      }
      results.push_back(std::move(doc));
    }
    // Results quote build logs: the environment's secrets are masked here as on stdout.
    const std::string markdown = redact_environment_secrets(github::summary_markdown(results));
    if (const char* path = std::getenv("GITHUB_STEP_SUMMARY"); path && *path) {
      auto written = fs::append_file(path, markdown);
      if (!written) throw CommandError(written.error().as(ErrorKind::usage));
      log_.result("sagebuild: summary of {} entr{} appended to $GITHUB_STEP_SUMMARY\n",
                  results.size(), results.size() == 1 ? "y" : "ies");
    } else {
      log_.result("{}", markdown);
    }
    return kSuccess;
  }

  std::vector<std::string> files_;
};

}  // namespace

std::unique_ptr<Command> make_summary_command(const Context& context) {
  return std::make_unique<SummaryCommand>(context);
}

}  // namespace sagebuild::cli
