#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/install_check.h"
#include "backend/wheel_finish.h"
#include "cli/commands/commands.h"
#include "cli/terminal.h"
#include "github/output.h"
#include "util/json_text.h"
#include "util/text.h"
#include "wheel/verify.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class VerifyWheelCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("wheels", wheels_, "wheel files, or directories of them");
    // One value per occurrence, so that a wheel path after the option is never taken for a
    // check; the value is a comma-separated list ("--select A,R --select B004").
    cmd.add_option("--select", options_.select,
                   "run only these checks: ids, names or id prefixes like R, comma-separated")
        ->expected(1)
        ->allow_extra_args(false);
    cmd.add_option("--ignore", options_.ignore, "skip these checks (comma-separated)")
        ->expected(1)
        ->allow_extra_args(false);
    cmd.add_option("--expect-profile", expect_profile_,
                   "each wheel must be one of this profile's entries");
    cmd.add_option("--expect-entry", expect_entry_, "the wheel must be this matrix entry");
    cmd.add_flag("--json", json_, "print a JSON report");
    cmd.add_flag("--import-test", import_test_,
                 "install each wheel into a fresh venv of its Python with its torch, and "
                 "import it (I001)");
    cmd.add_option("--import-python", import_options_.python,
                   "for --import-test: an interpreter that already has torch; the venv "
                   "uses its site-packages and installs only the wheel");
    cmd.add_option("--threads", options_.threads, "reader threads (default: all cores)");
    cmd.add_flag("--list-checks", list_, "list the checks and exit");
  }

  int run() override {
    if (list_) return list_checks(json_);
    if (wheels_.empty())
      throw CommandError{ErrorKind::usage, "verify-wheel needs at least one wheel file"};
    const bool install = import_test_ || !import_options_.python.empty();
    return verify_wheel(wheels_, options_, expect_profile_, expect_entry_, json_,
                        install ? std::optional(import_options_) : std::nullopt);
  }

 private:
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
      throw CommandError{ErrorKind::usage,
                         "--expect-profile and --expect-entry need matrix.yaml "
                         "(run in the repository or pass --matrix)"};
    }
    if (m) {
      add_matrix_expectations(*m, options);
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
          throw CommandError{ErrorKind::usage, fmt::format("unknown entry '{}'{}", expect_entry,
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
      // --quiet: only the wheels that failed; --verbose: every check's outcome after the report.
      if (log_.quiet() && report.ok()) continue;
      log_.result("{}", wheel::format_report(report));
      if (log_.verbose()) log_.result("{}", check_outcomes(report));
      if (annotate) {
        for (const auto& f : report.findings) {
          log_.result("{}\n", error_annotation(
                                  file.string(), 0, 0,
                                  fmt::format("{} {}{}", f.check,
                                              f.where.empty() ? "" : f.where + ": ", f.message)));
        }
      }
    }
    if (json) log_.result("{}\n", json_text(reports, 2));
    if (failed) {
      log_.error("sagebuild: {} of {} wheel{} failed verification\n", failed, wheels.size(),
                 wheels.size() == 1 ? "" : "s");
      return kVerificationFailure;
    }
    return kSuccess;
  }

  static std::string check_outcomes(const wheel::WheelReport& report) {
    std::string lines;
    for (const std::string& id : report.checks_run) {
      const bool failed = std::any_of(report.findings.begin(), report.findings.end(),
                                      [&](const wheel::Finding& f) { return f.check == id; });
      const auto* check = wheel::find_check(id);
      lines += fmt::format("      {:<7} {} {}\n", failed ? "failed" : "passed", id,
                           check ? check->name : "");
    }
    for (const auto& [id, why] : report.skipped) {
      const auto* check = wheel::find_check(id);
      lines +=
          fmt::format("      {:<7} {} {} ({})\n", "skipped", id, check ? check->name : "", why);
    }
    return lines;
  }

  int list_checks(bool json) {
    if (json) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& c : wheel::check_catalog()) {
        list.push_back({{"id", c.id}, {"name", c.name}, {"summary", c.summary}, {"fix", c.fix}});
      }
      log_.result("{}\n", json_text(list, 2));
      return kSuccess;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : wheel::check_catalog()) {
      rows.push_back({std::string(c.id), std::string(c.name), std::string(c.summary)});
    }
    print_table({"ID", "NAME", "CHECKS THAT"}, rows);
    return kSuccess;
  }

  static void check_known_check(const std::string& key) {
    for (const auto& c : wheel::check_catalog()) {
      if (std::string_view(c.id).starts_with(key) || c.name == key) return;
    }
    std::vector<std::string> names;
    for (const auto& c : wheel::check_catalog())
      names.emplace_back(c.name);
    throw CommandError{ErrorKind::usage, fmt::format("unknown check '{}'{}; see --list-checks", key,
                                                     text::did_you_mean(key, names))};
  }

  std::vector<std::string> wheels_;
  wheel::VerifyOptions options_;
  std::string expect_profile_, expect_entry_;
  bool json_ = false, list_ = false, import_test_ = false;
  backend::InstallCheckOptions import_options_;
};

}  // namespace

std::unique_ptr<Command> make_verify_wheel_command(const Context& context) {
  return std::make_unique<VerifyWheelCommand>(context);
}

}  // namespace sagebuild::cli
