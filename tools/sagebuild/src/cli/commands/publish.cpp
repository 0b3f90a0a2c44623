#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/delivery_gate.h"
#include "cli/network_flags.h"
#include "platform/interrupt.h"
#include "platform/process.h"
#include "registry/attestation.h"
#include "registry/upload.h"
#include "util/secrets.h"
#include "util/sha256.h"

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
    cmd.add_option("--index-url", request_.index_url,
                   "where the registry lists its files, to compare a file it has already "
                   "(default: the upload URL's simple/)");
    cmd.add_flag("--allow-local-versions", request_.allow_local_versions,
                 "upload versions with a +local label (PyPI refuses them)");
    cmd.add_flag("--local-labels", gate_.label,
                 "upload each wheel under its variant's local version (2.2.0+cu130), for a "
                 "registry that accepts them; implies --allow-local-versions");
    cmd.add_flag("--attestations", request_.attestations,
                 "send each file's PEP 740 attestation (FILE.publish.attestation beside it, as "
                 "`pypi-attestations sign` writes it); a file without one naming it is not "
                 "uploaded");
    cmd.add_flag("--no-verify", no_verify_, "upload without verifying the wheels first");
    cmd.add_option("--delivered-dir", gate_.delivered_dir,
                   "also copy each file as delivered (labelled) into this folder, e.g. to attest "
                   "it: the uploaded bytes");
    cmd.add_flag("--dry-run", dry_run_,
                 "verify, label and check the set, print what would be uploaded; contact no "
                 "server");
    network_.add_to(&cmd);
  }

  int run() override {
    const platform::InterruptGuard ctrl_c;  // the upload in flight is aborted, temp files go
    gate_.verify = !no_verify_;
    if (gate_.label) request_.allow_local_versions = true;
    if (const auto m = load_if_present()) add_matrix_expectations(*m, gate_.checks);
    const DeliverySet set =
        prepare_delivery(std::vector<stdfs::path>(files_.begin(), files_.end()), gate_, log_);
    // A labelled copy lives in a temporary folder: its attestation is looked for where the
    // copies --delivered-dir kept are, and beside the inputs.
    request_.attestation_dirs = {gate_.delivered_dir};
    for (const std::string& file : files_)
      request_.attestation_dirs.push_back(stdfs::path(file).parent_path());
    if (dry_run_) {
      print_dry_run(set, "upload", log_);
      return check_attestations(set.files);
    }
    return publish(request_, set, network_);
  }

 private:
  int publish(registry::PublishRequest request, const DeliverySet& set,
              const NetworkFlags& network) {
    const std::vector<stdfs::path>& paths = set.files;
    request.username = env_or({"SAGEBUILD_PUBLISH_USERNAME", "TWINE_USERNAME"});
    request.password = env_or({"SAGEBUILD_PUBLISH_PASSWORD", "TWINE_PASSWORD"});
    network.apply(request.http, request.retry, log_);
    log_.info("sagebuild: publishing {} file{} to {}\n", paths.size(), paths.size() == 1 ? "" : "s",
              redact_url(request.repository_url));
    const auto results = registry::publish_wheels(
        request, paths, [this](const std::string& line) { log_.result("sagebuild: {}\n", line); });
    std::vector<stdfs::path> failed_files;
    for (const auto& r : results) {
      if (r.outcome == registry::PublishOutcome::failed) failed_files.push_back(r.file);
    }
    name_sources_of_failures(set, failed_files, log_);
    const std::size_t failed = failed_files.size();
    if (platform::stop_requested()) {
      throw CommandError{ErrorKind::interrupted,
                         fmt::format("interrupted: {} of {} file{} not published; run it again "
                                     "(a registry keeps no half-sent file)",
                                     failed, results.size(), results.size() == 1 ? "" : "s")};
    }
    if (failed) {
      throw CommandError{ErrorKind::publish,
                         fmt::format("{} of {} file{} not published", failed, results.size(),
                                     results.size() == 1 ? "" : "s")};
    }
    return kSuccess;
  }

  // --dry-run --attestations: each file's attestation checked as the upload would check it.
  int check_attestations(const std::vector<stdfs::path>& paths) {
    if (!request_.attestations) return kSuccess;
    std::size_t failed = 0;
    for (const auto& path : paths) {
      auto digest = sha256_file(path);
      auto field = digest ? registry::attestations_field(path, to_hex(digest->digest),
                                                         request_.attestation_dirs)
                          : Expected<std::string>(digest.error());
      if (!field) ++failed;
      log_.result("sagebuild:   {}: {}\n", path.filename().string(),
                  field ? "attestation names it" : field.error().message);
    }
    if (failed) {
      throw CommandError{ErrorKind::publish,
                         fmt::format("{} of {} file{} without a valid attestation", failed,
                                     paths.size(), paths.size() == 1 ? "" : "s")};
    }
    return kSuccess;
  }

  registry::PublishRequest request_;
  std::vector<std::string> files_;
  GateOptions gate_;
  bool no_verify_ = false, dry_run_ = false;
  NetworkFlags network_;
};

}  // namespace

std::unique_ptr<Command> make_publish_command(const Context& context) {
  return std::make_unique<PublishCommand>(context);
}

}  // namespace sagebuild::cli
