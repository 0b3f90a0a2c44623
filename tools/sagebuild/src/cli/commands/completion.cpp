#include "cli/completion.h"

#include <set>

#include "cli/commands/commands.h"

namespace sagebuild::cli {
namespace {

// sagebuild completion bash|zsh: the completion script, from this very command line.
class CompletionCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    root_ = cmd.get_parent();
    cmd.add_option("shell", shell_, "bash or zsh")
        ->required()
        ->check(CLI::IsMember({"bash", "zsh"}));
  }

  int run() override {
    const auto commands = describe_cli(*root_);
    log_.result("{}", (shell_ == "bash" ? bash_completion(commands) : zsh_completion(commands)));
    return kSuccess;
  }

 private:
  CLI::App* root_ = nullptr;
  std::string shell_;
};

// sagebuild complete-values profiles|entries: what the completion scripts offer for --profile
// and --entry, one per line, from the nearest matrix.yaml. Nothing on stdout and exit 0 when
// there is no usable matrix (the scripts send stderr nowhere): a completion offers nothing then.
class CompleteValuesCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("what", what_, "profiles or entries")
        ->required()
        ->check(CLI::IsMember({"profiles", "entries"}));
  }

  int run() override {
    const std::optional<LoadedMatrix> m = load_quietly();
    if (!m) return kSuccess;
    if (what_ == "profiles") {
      for (const auto& p : m->matrix.profiles)
        log_.result("{}\n", p.name);
      return kSuccess;
    }
    std::set<std::string> ids;
    for (const auto& p : m->matrix.profiles) {
      auto entries = matrix::expand_profile(m->matrix, p.name, {m->package_version, "all"});
      if (!entries) continue;
      for (const auto& e : *entries)
        ids.insert(e.id);
    }
    for (const auto& id : ids)
      log_.result("{}\n", id);
    return kSuccess;
  }

 private:
  std::optional<LoadedMatrix> load_quietly() const {
    try {
      return load_if_present();
    } catch (const CommandError&) {
      return std::nullopt;
    }
  }
  std::string what_;
};

}  // namespace

std::unique_ptr<Command> make_completion_command(const Context& context) {
  return std::make_unique<CompletionCommand>(context);
}

std::unique_ptr<Command> make_complete_values_command(const Context& context) {
  return std::make_unique<CompleteValuesCommand>(context);
}

}  // namespace sagebuild::cli
