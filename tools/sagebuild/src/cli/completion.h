// Shell completion scripts (`sagebuild completion bash|zsh`), generated from the command-line
// definition itself, so a new command or flag completes without anyone editing a script:
// commands, each command's flags (with their help in zsh), the values of flags that take one of
// a fixed set, file names where a flag takes a path, and, by asking sagebuild at completion time
// (`sagebuild complete-values`), the profiles and entry ids of the nearest matrix.yaml.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sagebuild::cli {

// What the completion scripts know of one flag.
struct FlagSpec {
  std::vector<std::string> names;    // "-j", "--jobs"
  std::string help;                  // one line
  bool takes_value = false;          // an option, not a flag
  std::vector<std::string> choices;  // a fixed set of values (IsMember), else empty
  std::string dynamic;               // "profiles" or "entries": asked of sagebuild
  bool path = false;                 // a file or directory
};

struct CommandSpecForCompletion {
  std::string name;  // "" for the global flags; "cache prune" for a nested command
  std::string help;
  std::vector<FlagSpec> flags;
  bool takes_files = false;  // positional file arguments (verify-wheel's wheels)
  std::vector<std::string> positional_choices = {};  // a positional of a fixed set (bash, zsh)
};

// The visible commands and their flags, from the parsed-to-be CLI11 definition.
std::vector<CommandSpecForCompletion> describe_cli(const CLI::App& app);

std::string bash_completion(const std::vector<CommandSpecForCompletion>& commands);
std::string zsh_completion(const std::vector<CommandSpecForCompletion>& commands);

}  // namespace sagebuild::cli
