#include <fmt/format.h>

#include "cli/commands/commands.h"
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
  }

  int run() override { return index(inputs_, site_); }

 private:
  int index(const std::vector<std::string>& inputs, const std::string& site) {
    const std::vector<stdfs::path> wheels = wheel_files("index", inputs);
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
};

}  // namespace

std::unique_ptr<Command> make_index_command(const Context& context) {
  return std::make_unique<IndexCommand>(context);
}

}  // namespace sagebuild::cli
