#include "cli/app.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/exit_codes.h"
#include "cli/log_safe_stream.h"
#include "cli/terminal.h"
#include "util/text.h"

namespace sagebuild::cli {
namespace {

// CLI11's parse errors in sagebuild's voice: an unknown command or option is named, with the
// closest known one, and every message says which command it concerns.
std::string explain_parse_error(const CLI::App& app, int argc, const char* const* argv,
                                const CLI::ParseError& e) {
  std::vector<std::string> commands;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); }))
    commands.push_back(sub->get_name());
  // The command: the first word that is not an option (or the value of --matrix).
  const CLI::App* command = nullptr;
  int at = 1;
  for (; at < argc; ++at) {
    const std::string_view word = argv[at];
    if (word == "--matrix") {
      ++at;
      continue;
    }
    if (word.starts_with("-")) continue;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == word) command = sub;
    }
    if (!command) {
      return fmt::format("unknown command '{}'{}; commands: {}", word,
                         text::did_you_mean(word, commands), text::join(commands, ", "));
    }
    break;
  }
  if (!command) {
    return fmt::format("say which command to run: {} (sagebuild --help)",
                       text::join(commands, ", "));
  }
  // An option the command does not have.
  // Its own options (and its subcommands': cache prune) and the global ones (which may follow
  // the command: -q, --matrix).
  std::vector<std::string> options;
  std::vector<const CLI::App*> scopes = {command, &app};
  for (const CLI::App* sub : command->get_subcommands({}))
    scopes.push_back(sub);
  for (const CLI::App* scope : scopes) {
    for (const CLI::Option* o : scope->get_options()) {
      for (const std::string& name : o->get_lnames())
        options.push_back("--" + name);
      for (const std::string& name : o->get_snames())
        options.push_back("-" + name);
    }
  }
  for (int i = at + 1; i < argc; ++i) {
    std::string word = argv[i];
    if (!word.starts_with("-") || word == "-" || word == "--") continue;
    word = word.substr(0, word.find('='));
    if (std::find(options.begin(), options.end(), word) == options.end()) {
      return fmt::format("{}: unknown option '{}'{}; see sagebuild {} --help", command->get_name(),
                         word, text::did_you_mean(word, options), command->get_name());
    }
  }
  std::string what = e.what();
  if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  return fmt::format("{}: {}; see sagebuild {} --help", command->get_name(), what,
                     command->get_name());
}

int run_checked(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::string matrix_option;  // --matrix / SAGEBUILD_MATRIX, read by every command's load()
  Log log(out, err, Log::Level::info);
  const Context context{log, matrix_option};
  CLI::App app{
      "sagebuild: builds, verifies and ships the SageAttention CUDA wheels described "
      "by matrix.yaml",
      "sagebuild"};
  app.set_version_flag("--version", std::string("sagebuild ") + SAGEBUILD_VERSION);
  app.footer(kExitCodeHelp);
  app.require_subcommand(1);
  app.fallthrough();
  // One syntax everywhere: CLI11 on Windows would otherwise read "/x" (a POSIX path, as
  // sagebuild's own messages and the docs write them) as the option "x".
  app.allow_windows_style_options(false);
  app.add_option("--matrix", matrix_option,
                 "matrix.yaml to read (default: the nearest one in this directory or above)")
      ->envname("SAGEBUILD_MATRIX");
  auto* quiet = app.add_flag_callback(
      "-q,--quiet", [&log] { log.show(Log::Level::warning); },
      "print only results, failures and errors");
  app.add_flag_callback(
         "-v,--verbose", [&log] { log.show(Log::Level::detail); },
         "also print each command a build runs with its output, and every check's outcome")
      ->excludes(quiet);

  // One subcommand per row of the command table, each with the flags its command defines.
  std::vector<std::pair<CLI::App*, std::unique_ptr<Command>>> commands;
  for (const CommandSpec& spec : command_table()) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.help);
    if (spec.hidden) sub->group("");
    auto command = spec.make(context);
    command->define(*sub);
    commands.emplace_back(sub, std::move(command));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err) == 0 ? kSuccess : kUsageError;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err) == 0 ? kSuccess : kUsageError;
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err) == 0 ? kSuccess : kUsageError;
  } catch (const CLI::ParseError& e) {
    throw CommandError{ErrorKind::usage, explain_parse_error(app, argc, argv, e)};
  }
  for (const auto& [sub, command] : commands) {
    if (sub->parsed()) return command->run();
  }
  throw CommandError{ErrorKind::usage, "say which command to run (sagebuild --help)"};
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  // Whatever is printed, from here on, cannot run a workflow command (cli/log_safe_stream.h).
  const auto controls = [](bool terminal) {
    return terminal ? LogSafeBuffer::Controls::keep : LogSafeBuffer::Controls::escape;
  };
  LogSafeStream safe_out(out, controls(stdout_is_terminal()));
  LogSafeStream safe_err(err, controls(stderr_is_terminal()));
  try {
    return run_checked(argc, argv, out, err);
  } catch (const CommandError& e) {
    err << "sagebuild: error: " << e.message << "\n";
    return e.code();
  } catch (const std::exception& e) {
    err << "sagebuild: internal error: " << e.what() << " (please report this)\n";
    return kInternalError;
  } catch (...) {
    err << "sagebuild: internal error (please report this)\n";
    return kInternalError;
  }
}

}  // namespace sagebuild::cli
