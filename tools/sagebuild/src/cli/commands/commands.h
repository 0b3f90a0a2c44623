// Every command of sagebuild, in one table: a command is one file here (its flags and its work,
// a subclass of cli/command.h's Command) and one row of command_table(). The order of the table
// is the order of `sagebuild --help`.
#pragma once

#include <memory>
#include <vector>

#include "cli/command.h"

namespace sagebuild::cli {

struct CommandSpec {
  const char* name;
  const char* help;  // one line, for --help
  std::unique_ptr<Command> (*make)(const Context& context);
  bool hidden = false;  // for the tests only (no --help line)
};

const std::vector<CommandSpec>& command_table();

std::unique_ptr<Command> make_matrix_command(const Context& context);
std::unique_ptr<Command> make_bake_command(const Context& context);
std::unique_ptr<Command> make_profiles_command(const Context& context);
std::unique_ptr<Command> make_validate_command(const Context& context);
std::unique_ptr<Command> make_verify_wheel_command(const Context& context);
std::unique_ptr<Command> make_build_command(const Context& context);
std::unique_ptr<Command> make_version_command(const Context& context);
std::unique_ptr<Command> make_release_command(const Context& context);
std::unique_ptr<Command> make_publish_command(const Context& context);
std::unique_ptr<Command> make_index_command(const Context& context);
std::unique_ptr<Command> make_summary_command(const Context& context);
std::unique_ptr<Command> make_cache_command(const Context& context);
std::unique_ptr<Command> make_doctor_command(const Context& context);
std::unique_ptr<Command> make_completion_command(const Context& context);
std::unique_ptr<Command> make_complete_values_command(const Context& context);
std::unique_ptr<Command> make_parse_wheel_names_command(const Context& context);

}  // namespace sagebuild::cli
