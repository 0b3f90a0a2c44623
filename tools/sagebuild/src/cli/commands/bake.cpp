#include "backend/docker/bake.h"

#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "util/fs.h"
#include "util/json_text.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class BakeCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("--profile", profile_, "profile to write (default: every profile)");
    cmd.add_option("-o,--output", output_, "file to write, or - for standard output")
        ->capture_default_str();
    cmd.add_option("--dockerfile", options_.dockerfile, "Dockerfile of every target")
        ->capture_default_str();
    cmd.add_option("--output-dir", options_.output_dir, "where Bake puts the wheels")
        ->capture_default_str();
    cmd.add_option("--images", options_.images,
                   "image set of matrix.yaml's docker.images (default: $SAGEBUILD_DOCKER_IMAGES, "
                   "then docker.default)");
    ca_bundle_option_ =
        cmd.add_option("--ca-bundle", options_.ca_bundle,
                       "CA bundle handed to the builds as the secret 'ca-bundle' (default: "
                       "$SSL_CERT_FILE or the system bundle; '' for none)");
  }

  int run() override { return bake(profile_, output_, options_); }

 private:
  int bake(const std::string& profile, const std::string& output, backend::BakeOptions options) {
    const LoadedMatrix m = load();
    std::vector<backend::BakeGroup> groups;
    const std::vector<std::string> names =
        profile.empty() ? m.matrix.profile_names() : std::vector<std::string>{profile};
    for (const std::string& name : names) {
      auto entries = matrix::expand_profile(m.matrix, name, {m.package_version, "all"});
      if (!entries) throw CommandError(entries.error().as(ErrorKind::usage));
      groups.push_back({name, std::move(*entries)});
    }
    if (ca_bundle_option_->count() == 0) options.ca_bundle = backend::host_ca_bundle();
    options.compile_cache_remote_env = backend::host_compile_cache_remote_env();
    auto made = backend::make_bake_file(m.matrix, groups, options);
    if (!made) throw CommandError(made.error().as(ErrorKind::usage));
    const nlohmann::ordered_json& file = *made;
    if (file["target"].empty()) {
      throw CommandError{ErrorKind::usage,
                         fmt::format("profile '{}' has no entries that Docker can build (only "
                                     "platforms with 'docker:' in matrix.yaml; Windows wheels "
                                     "are built natively)",
                                     profile)};
    }
    const std::string text = json_text(file, 2) + "\n";
    if (output == "-") {
      log_.result("{}", text);
    } else {
      auto written = fs::write_file_atomic(output, text);
      if (!written) throw CommandError(written.error().as(ErrorKind::usage));
      log_.info("sagebuild: wrote {} ({} targets)\n", output, file["target"].size());
    }
    return kSuccess;
  }

  std::string profile_, output_ = "-";
  backend::BakeOptions options_;
  CLI::Option* ca_bundle_option_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> make_bake_command(const Context& context) {
  return std::make_unique<BakeCommand>(context);
}

}  // namespace sagebuild::cli
