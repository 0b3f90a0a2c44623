#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "util/json_text.h"
#include "util/text.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class ProfilesCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_option("--format", format_, "table or json")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
  }

  int run() override { return profiles(format_); }

 private:
  int profiles(const std::string& format) {
    const LoadedMatrix m = load();
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    std::vector<std::vector<std::string>> rows;
    for (const auto& profile : m.matrix.profiles) {
      auto entries = expand(m, profile.name, "all");
      std::map<std::string, int> per_platform;
      for (const auto& e : entries)
        per_platform[e.platform]++;
      std::vector<std::string> counts;
      nlohmann::ordered_json count_json = nlohmann::ordered_json::object();
      for (const auto& platform : m.matrix.platforms) {
        if (per_platform.count(platform.name)) {
          counts.push_back(fmt::format("{} {}", platform.name, per_platform[platform.name]));
          count_json[platform.name] = per_platform[platform.name];
        }
      }
      list.push_back(
          {{"name", profile.name}, {"description", profile.description}, {"entries", count_json}});
      rows.push_back({profile.name, text::join(counts, ", "), profile.description});
    }
    if (format == "json") {
      log_.result("{}\n", json_text(list, 2));
    } else {
      print_table({"PROFILE", "ENTRIES", "DESCRIPTION"}, rows);
    }
    return kSuccess;
  }

  std::string format_ = "table";
};

}  // namespace

std::unique_ptr<Command> make_profiles_command(const Context& context) {
  return std::make_unique<ProfilesCommand>(context);
}

}  // namespace sagebuild::cli
