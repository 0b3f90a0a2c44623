
#include <fmt/format.h>

#include "cli/commands/commands.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class ValidateCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override { (void)cmd; }

  int run() override { return validate(); }

 private:
  int validate() {
    const LoadedMatrix m = load();
    const std::size_t entries =
        matrix::expand_all_profiles(m.matrix, {m.package_version, "all"}).size();
    log_.result("{}: ok ({} {} {}, {} profiles, {} distinct entries)\n", m.display_name,
                m.matrix.package.name, m.package_version, m.matrix.package.version.file,
                m.matrix.profiles.size(), entries);
    return kSuccess;
  }
};

}  // namespace

std::unique_ptr<Command> make_validate_command(const Context& context) {
  return std::make_unique<ValidateCommand>(context);
}

}  // namespace sagebuild::cli
