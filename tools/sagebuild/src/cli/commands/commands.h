// Every command of sagebuild, in one table: a command is one file here (its flags and its work,
// a subclass of cli/command.h's Command, and its make_<name>_command) and one row of
// command_table() in commands.cpp, with that function's declaration beside it; the build takes
// every file of this folder (tools/sagebuild/CMakeLists.txt), and commands_test.cpp checks that
// files and rows match. The order of the table is the order of `sagebuild --help`.
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

}  // namespace sagebuild::cli
