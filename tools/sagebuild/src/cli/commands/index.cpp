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
    cmd.add_flag("--no-variants", no_variants_,
                 "write no variants/ index (the universal wheels as PEP 825 wheel variants)");
  }

  int run() override { return index(inputs_, site_); }

 private:
  int index(const std::vector<std::string>& inputs, const std::string& site) {
    const std::vector<stdfs::path> wheels = wheel_files("index", inputs);
    const auto m = load_if_present();
    // What the index serves is what verify-wheel passed (as release and publish deliver), with
    // matrix.yaml's expectations in a checkout.
    if (!no_verify_) {
      wheel::VerifyOptions checks;
      if (m) add_matrix_expectations(*m, checks);
      verify_before_delivery(wheels, checks, "nothing indexed", log_);
    }
    // An index per CUDA build PyTorch publishes (matrix.yaml's torch table) of each CUDA major
    // the wheels serve, so that "the suffix your torch came from" always names one.
    registry::IndexOptions options;
    options.variants = !no_variants_;
    if (m) {
      for (const auto& release : m->matrix.torch)
        for (const auto& cuda : release.cuda)
          options.torch_cuda_builds.push_back(cuda.value);
    }
    std::vector<registry::IndexedWheel> described;
    for (const auto& w : wheels) {
      auto d = registry::describe_wheel(w);
      if (!d)
        throw CommandError{ErrorKind::usage,
                           fmt::format("cannot index {}: {}", w.string(), d.error().message)};
      described.push_back(std::move(*d));
    }
    auto summary = registry::write_index(described, site, options);
    if (!summary) throw CommandError(summary.error().as(ErrorKind::usage));
    for (const std::string& line : summary->left_out_of_combined)
      log_.info("sagebuild: not in simple/ or wheels/index.html: {}\n", line);
    auto listed = [](const std::vector<std::string>& names) {
      return names.empty() ? std::string("none") : text::join(names, "/simple, ") + "/simple";
    };
    log_.result(
        "sagebuild: indexed {} wheel{} into {}: simple/, per CUDA build of torch {}, per CUDA "
        "major {}, per variant {}, {} wheel variant{} in variants/simple\n",
        summary->wheels, summary->wheels == 1 ? "" : "s", site, listed(summary->cuda_build_indexes),
        listed(summary->cuda_indexes), listed(summary->variants), summary->variant_wheels,
        summary->variant_wheels == 1 ? "" : "s");
    return kSuccess;
  }

  std::vector<std::string> inputs_;
  std::string site_ = "site";
  bool no_verify_ = false, no_variants_ = false;
};

}  // namespace

std::unique_ptr<Command> make_index_command(const Context& context) {
  return std::make_unique<IndexCommand>(context);
}

}  // namespace sagebuild::cli
