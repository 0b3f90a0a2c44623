#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/delivery_gate.h"
#include "registry/simple_index.h"
#include "util/text.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class IndexCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("wheels", inputs_, "wheel files or directories of them")->required();
    cmd.add_option("-o,--out", site_, "the site directory to (re)write")->capture_default_str();
    cmd.add_flag("--no-verify", no_verify_, "index wheels without verifying them first");
  }

  int run() override { return index(inputs_, site_); }

 private:
  int index(const std::vector<std::string>& inputs, const std::string& site) {
    const std::vector<stdfs::path> wheels = wheel_files("index", inputs);
    // What the index serves is what verify-wheel passed (as release and publish deliver), with
    // matrix.yaml's expectations in a checkout.
    if (!no_verify_) {
      wheel::VerifyOptions checks;
      if (const auto m = load_if_present()) add_matrix_expectations(*m, checks);
      verify_before_delivery(wheels, checks, "nothing indexed", log_);
    }
    std::vector<registry::IndexedWheel> described;
    for (const auto& w : wheels) {
      auto d = registry::describe_wheel(w);
      if (!d)
        throw CommandError{ErrorKind::usage,
                           fmt::format("cannot index {}: {}", w.string(), d.error().message)};
      described.push_back(std::move(*d));
    }
    auto summary = registry::write_index(described, site);
    if (!summary) throw CommandError(summary.error().as(ErrorKind::usage));
    log_.result(
        "sagebuild: indexed {} wheel{} into {}: simple/, per CUDA major {}, per variant {}\n",
        summary->wheels, summary->wheels == 1 ? "" : "s", site,
        text::join(summary->cuda_indexes, "/simple, ") + "/simple",
        text::join(summary->variants, "/simple, ") + "/simple");
    return kSuccess;
  }

  std::vector<std::string> inputs_;
  std::string site_ = "site";
  bool no_verify_ = false;
};

}  // namespace

std::unique_ptr<Command> make_index_command(const Context& context) {
  return std::make_unique<IndexCommand>(context);
}

}  // namespace sagebuild::cli
