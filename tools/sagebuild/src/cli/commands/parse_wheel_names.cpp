#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "wheel/filename.h"
#include "wheel/requirement.h"

namespace sagebuild::cli {
namespace {

namespace stdfs = std::filesystem;

class ParseWheelNamesCommand final : public Command {
 public:
  using Command::Command;

  void define(CLI::App& cmd) override {
    cmd.add_flag("--requirements", requirements_,
                 "read PEP 508 requirements (Requires-Dist values) instead of file names");
  }

  int run() override {
    return requirements_ ? parse_requirements(std::cin) : parse_wheel_names(std::cin);
  }

 private:
  // For differential tests against packaging.utils.parse_wheel_filename: one file name per
  // input line, one JSON object per output line.
  // For differential tests against packaging.requirements and marker evaluation: one
  // requirement per input line, {"input", "ok", "error"} per output line.
  int parse_requirements(std::istream& in) {
    std::string line;
    while (std::getline(in, line)) {
      const auto error = wheel::requirement_error(line);
      nlohmann::ordered_json row = {{"input", line}, {"ok", !error}};
      if (error) row["error"] = *error;
      log_.result("{}\n", row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    return kSuccess;
  }

  int parse_wheel_names(std::istream& in) {
    std::string line;
    while (std::getline(in, line)) {
      auto parsed = wheel::parse_wheel_filename(line);
      nlohmann::ordered_json row = {{"input", line}, {"ok", parsed.has_value()}};
      if (parsed) {
        nlohmann::ordered_json tags = nlohmann::ordered_json::array();
        for (const auto& t : parsed->tags)
          tags.push_back(t.str());
        row["name"] = parsed->canonical_name;
        row["version"] = parsed->version.normalized;
        row["build"] =
            parsed->build
                ? nlohmann::ordered_json::array({parsed->build->number, parsed->build->suffix})
                : nlohmann::ordered_json::array();
        row["tags"] = tags;
      } else {
        row["error"] = parsed.error().message;
      }
      // Invalid UTF-8 in hostile names must not stop the run: replace it in the output.
      log_.result("{}\n", row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    return kSuccess;
  }

  bool requirements_ = false;
};

}  // namespace

std::unique_ptr<Command> make_parse_wheel_names_command(const Context& context) {
  return std::make_unique<ParseWheelNamesCommand>(context);
}

}  // namespace sagebuild::cli
