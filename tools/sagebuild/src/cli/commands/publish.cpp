#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/network_flags.h"
#include "registry/upload.h"
#include "util/secrets.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class PublishCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("files", files_, "wheels to upload")->required()->check(CLI::ExistingFile);
    cmd.add_option("--repository-url", request_.repository_url, "the registry's upload URL")
        ->required();
    cmd.add_flag("--allow-local-versions", request_.allow_local_versions,
                 "upload versions with a +local label (PyPI refuses them)");
    network_.add_to(&cmd);
  }

  int run() override { return publish(request_, files_, network_); }

 private:
  int publish(registry::PublishRequest request, const std::vector<std::string>& files,
              const NetworkFlags& network) {
    request.username = env_or({"SAGEBUILD_PUBLISH_USERNAME", "TWINE_USERNAME"});
    request.password = env_or({"SAGEBUILD_PUBLISH_PASSWORD", "TWINE_PASSWORD"});
    network.apply(request.http, request.retry, err_);
    std::vector<stdfs::path> paths(files.begin(), files.end());
    info() << fmt::format("sagebuild: publishing {} file{} to {}\n", paths.size(),
                          paths.size() == 1 ? "" : "s", redact_url(request.repository_url));
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

  registry::PublishRequest request_;
  std::vector<std::string> files_;
  NetworkFlags network_;
};

}  // namespace

std::unique_ptr<Command> make_publish_command(const Context& context) {
  return std::make_unique<PublishCommand>(context);
}

}  // namespace sagebuild::cli
