#include "cli/commands/commands.h"

namespace sagebuild::cli {

// Each defined in its own file of this folder, named after the command.
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

const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> table = {
      {"matrix", "Expand a profile into build entries", make_matrix_command},
      {"bake", "Write the Docker Bake JSON file for one profile or all", make_bake_command},
      {"profiles", "List the profiles of matrix.yaml", make_profiles_command},
      {"validate", "Check matrix.yaml and report every problem", make_validate_command},
      {"verify-wheel", "Check wheels before publishing: name, archive, RECORD, metadata, binaries",
       make_verify_wheel_command},
      {"build",
       "Build matrix entries (--profile, --entry) or this environment (--env current) into "
       "verified wheels in dist/",
       make_build_command},
      {"version", "The version this checkout's wheels get, and what git says about the checkout",
       make_version_command},
      {"release", "Upload wheels to the GitHub release of a tag (created when missing)",
       make_release_command},
      {"publish", "Upload wheels to a PyPI-compatible registry (twine's upload API)",
       make_publish_command},
      {"index",
       "Write static PEP 503/691 package indexes: per CUDA major, per torch/CUDA variant, and "
       "combined",
       make_index_command},
      {"summary", "Markdown of build results for $GITHUB_STEP_SUMMARY (stdout when unset)",
       make_summary_command},
      {"doctor", "What this machine can build of the matrix, why not, and how to fix it",
       make_doctor_command},
      {"cache", "List the build cache (sizes, last use) or prune it", make_cache_command},
      {"completion", "Print the bash or zsh completion script", make_completion_command},
      // The filename parser alone, for the differential tests (tests/wheels/).
      {"parse-wheel-names", "", make_parse_wheel_names_command, true},
      // Profiles and entry ids for the completion scripts.
      {"complete-values", "", make_complete_values_command, true},
  };
  return table;
}

}  // namespace sagebuild::cli
