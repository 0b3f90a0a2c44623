#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/build_options.h"
#include "backend/registry.h"
#include "cli/commands/commands.h"
#include "toolchain/cuda.h"
#include "util/json_text.h"

namespace sagebuild::cli {
namespace {

// sagebuild doctor: what this machine can build of a profile (or of the matrix), why not, and
// what to do about it. Exit 0 when every selected entry can build here, 4 when one cannot.
class DoctorCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("--profile", profile_, "examine this profile's entries (default: every one)");
    cmd.add_option("--entry", entries_, "examine this entry; repeatable");
    cmd.add_option("--platform", platform_, "platform of the entries")->capture_default_str();
    cmd.add_option("--backend", options_.backend,
                   backend::selectable_backend_list() + ": which backend's needs to check")
        ->check(CLI::IsMember(backend::selectable_backend_names()))
        ->capture_default_str();
    cmd.add_option("--images", options_.docker_images,
                   "--backend docker: the image set of docker.images (as for build)");
    cmd.add_option("--cache-dir", options_.cache, "the build cache (as for build)");
    cmd.add_option("--cuda-path", cuda_paths_, toolchain::kCudaPathHelp);
    cmd.add_option("--python-env", options_.torch.existing,
                   "an interpreter whose environment has torch (as for build)");
    cmd.add_option("--torch-index-url", options_.torch.index_url, "where torch would come from");
    cmd.add_flag("--json", json_, "print a JSON report");
  }

  int run() override {
    const LoadedMatrix m = load();
    const auto selected = select_entries(m, profile_, entries_, platform_);
    backend::BuildOptions options = options_;
    options.root = m.root;
    if (auto normalized = backend::normalize_build_options(options, cuda_paths_); !normalized) {
      throw CommandError(normalized.error().as(ErrorKind::usage));
    }
    const backend::DoctorReport report = backend::examine_backends(m.matrix, selected, options);
    if (json_) {
      print_json(report);
    } else {
      print_text(report, selected.size(), options);
    }
    return report.ready() == report.entries.size() ? kSuccess : kBuildFailure;
  }

 private:
  void print_text(const backend::DoctorReport& report, std::size_t total,
                  const backend::BuildOptions& options) {
    log_.info("sagebuild doctor: {} entr{} of {}, cache {}\n\n", total, total == 1 ? "y" : "ies",
              profile_.empty() ? "the matrix" : "profile " + profile_, options.cache.string());
    for (const auto& c : report.checks) {
      if (log_.quiet() && c.health == backend::Health::ok) continue;
      const char* mark = c.health == backend::Health::ok        ? "ok"
                         : c.health == backend::Health::warning ? "warning"
                                                                : "PROBLEM";
      log_.result("  {:<8} {:<28} {}\n", mark, c.subject, c.detail);
      if (!c.fix.empty()) log_.result("  {:<8} {:<28} fix: {}\n", "", "", c.fix);
    }
    log_.result("\n{} of {} entr{} can build here\n", report.ready(), report.entries.size(),
                report.entries.size() == 1 ? "y" : "ies");
    for (const auto& e : report.entries) {
      if (e.ready && (log_.quiet() || !log_.verbose())) continue;
      log_.result("  {:<8} {}{}\n", e.ready ? "ready" : "cannot", e.id,
                  e.ready ? "" : ": " + e.reason);
    }
  }

  void print_json(const backend::DoctorReport& report) {
    nlohmann::ordered_json checks = nlohmann::ordered_json::array();
    for (const auto& c : report.checks) {
      checks.push_back({{"area", c.area},
                        {"subject", c.subject},
                        {"health", backend::health_name(c.health)},
                        {"detail", c.detail},
                        {"fix", c.fix}});
    }
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    for (const auto& e : report.entries) {
      nlohmann::ordered_json row = {{"id", e.id}, {"ready", e.ready}};
      if (!e.ready) row["reason"] = e.reason;
      entries.push_back(row);
    }
    log_.result("{}\n", json_text(nlohmann::ordered_json{{"ready", report.ready()},
                                                         {"total", report.entries.size()},
                                                         {"checks", checks},
                                                         {"entries", entries}},
                                  2));
  }

  std::string profile_;
  std::vector<std::string> entries_;
  std::string platform_ = "linux";
  std::vector<std::string> cuda_paths_;
  backend::BuildOptions options_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_doctor_command(const Context& context) {
  return std::make_unique<DoctorCommand>(context);
}

}  // namespace sagebuild::cli
