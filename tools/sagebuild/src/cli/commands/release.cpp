#include "github/release.h"

#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/delivery_gate.h"
#include "cli/network_flags.h"
#include "platform/interrupt.h"
#include "platform/process.h"
#include "util/fs.h"
#include "vcs/release_version.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class ReleaseCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("files", files_, "wheels (or any files) to attach")
        ->required()
        ->check(CLI::ExistingFile);
    cmd.add_option("--tag", request_.tag, "the release's tag, e.g. v2.2.0")->required();
    cmd.add_option("--repo", request_.repo, "owner/name (default: $GITHUB_REPOSITORY)");
    cmd.add_option("--title", request_.title, "release name (default: the tag)");
    cmd.add_option("--notes", request_.notes, "release notes, for a new release");
    cmd.add_option("--notes-file", notes_file_, "release notes from a file")
        ->check(CLI::ExistingFile);
    cmd.add_flag("--draft", request_.draft, "create the release as a draft");
    cmd.add_flag("--clobber", request_.clobber,
                 "replace assets of the same name whose content differs");
    cmd.add_flag("--no-verify", no_verify_, "upload wheels without verifying them first");
    cmd.add_flag("--any-tag", any_tag_,
                 "attach the wheels to a tag that does not name their version (a rolling "
                 "'nightly' release); otherwise the tag must be <tag prefix><version>");
    cmd.add_option("--delivered-dir", delivered_dir_,
                   "also copy each file as delivered (labelled) into this folder, e.g. to attest "
                   "it: the uploaded bytes");
    cmd.add_flag("--dry-run", dry_run_,
                 "verify and label the wheels, check the set, print what would be attached; "
                 "contact no server");
    network_.add_to(&cmd);
  }

  int run() override {
    const platform::InterruptGuard ctrl_c;  // the upload in flight is aborted, temp files go
    if (!notes_file_.empty()) {
      auto notes = fs::read_file(notes_file_);
      if (!notes) throw CommandError(notes.error().as(ErrorKind::usage));
      request_.notes = *notes;
    }
    // What the upload needs is checked before the wheels are verified and labelled (which takes
    // a while): a tag that does not name the wheels' version, a missing token or repository are
    // said at once.
    const auto m = load_if_present();
    if (!any_tag_) check_tag(m ? m->matrix.package.version.tag_prefix : "v");
    if (!dry_run_) resolve_destination(request_);
    // Assets are one flat namespace (`pip install --find-links <release>`): every wheel goes
    // under its variant's local version, so that pip and uv resolve the set.
    GateOptions gate;
    gate.verify = !no_verify_;
    gate.label = true;
    gate.delivered_dir = delivered_dir_;
    if (m) add_matrix_expectations(*m, gate.checks);
    const DeliverySet set =
        prepare_delivery(std::vector<stdfs::path>(files_.begin(), files_.end()), gate, log_);
    if (dry_run_) {
      print_dry_run(set, "attach", log_);
      return kSuccess;
    }
    return release(request_, set, network_);
  }

 private:
  // The tag names the wheels' version as a tag build's must (vcs::check_release_tag), with the
  // tag prefix of matrix.yaml where there is one.
  void check_tag(const std::string& prefix) const {
    std::vector<std::string> names;
    for (const std::string& f : files_)
      names.push_back(stdfs::path(f).filename().string());
    if (auto checked = vcs::check_release_tag(request_.tag, prefix, names); !checked) {
      throw CommandError(checked.error().as(ErrorKind::usage));
    }
  }

  // The token, the repository and the API's URL, from the options and the environment.
  void resolve_destination(github::ReleaseRequest& request) const {
    request.token = env_or({"GITHUB_TOKEN", "GH_TOKEN"});
    if (request.token.empty()) {
      throw CommandError{ErrorKind::usage, "no token: set GITHUB_TOKEN (or GH_TOKEN)"};
    }
    if (request.repo.empty()) request.repo = env_or({"GITHUB_REPOSITORY"});
    if (request.repo.empty() || request.repo.find('/') == std::string::npos) {
      throw CommandError{ErrorKind::usage,
                         "no repository: pass --repo owner/name (or set "
                         "GITHUB_REPOSITORY)"};
    }
    request.api_url = env_or({"GITHUB_API_URL"}, "https://api.github.com");
  }

  int release(github::ReleaseRequest request, const DeliverySet& set, const NetworkFlags& network) {
    network.apply(request.http, request.retry, log_);
    auto result = github::upload_release_assets(
        request, set.files,
        [this](const std::string& line) { log_.result("sagebuild: {}\n", line); });
    // (Its error is `interrupted` when a stop request ended it.)
    if (!result) throw CommandError(result.error().as(ErrorKind::publish));
    std::vector<stdfs::path> failed_files;
    for (const auto& a : result->assets) {
      if (a.outcome == github::AssetOutcome::failed) failed_files.push_back(a.file);
    }
    name_sources_of_failures(set, failed_files, log_);
    const std::size_t failed = failed_files.size();
    if (platform::stop_requested()) {
      throw CommandError{
          ErrorKind::interrupted,
          fmt::format("interrupted: {} of {} asset{} not uploaded; run it again (a "
                      "half-sent asset is replaced)",
                      failed, result->assets.size(), result->assets.size() == 1 ? "" : "s")};
    }
    if (failed) {
      throw CommandError{ErrorKind::publish,
                         fmt::format("{} of {} asset{} not uploaded", failed, result->assets.size(),
                                     result->assets.size() == 1 ? "" : "s")};
    }
    log_.result("sagebuild: release {} has all {} asset{}\n", request.tag, result->assets.size(),
                result->assets.size() == 1 ? "" : "s");
    return kSuccess;
  }

  github::ReleaseRequest request_;
  std::vector<std::string> files_;
  std::string notes_file_;
  std::filesystem::path delivered_dir_;
  bool no_verify_ = false, dry_run_ = false, any_tag_ = false;
  NetworkFlags network_;
};

}  // namespace

std::unique_ptr<Command> make_release_command(const Context& context) {
  return std::make_unique<ReleaseCommand>(context);
}

}  // namespace sagebuild::cli
