#include "cli/completion.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "util/text.h"

namespace sagebuild::cli {
namespace {

// Flags whose value is a file or directory, and flags whose values sagebuild lists itself.
const std::set<std::string> kPathFlags = {
    "--matrix",        "--cache-dir",        "--dist", "--python", "--python-env",
    "--dockerfile",    "--output-dir",       "--out",  "--output", "--notes-file",
    "--import-python", "--torch-find-links", "-o"};
std::string dynamic_values(const std::string& name) {
  if (name == "--profile" || name == "--expect-profile") return "profiles";
  if (name == "--entry" || name == "--expect-entry") return "entries";
  return "";
}

// "{native,docker}" at the end of CLI11's type name: an IsMember check's set.
std::vector<std::string> choices_of(const CLI::Option& o) {
  const std::string type = o.get_type_name();
  const std::size_t open = type.find('{');
  const std::size_t close = type.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  return text::split(type.substr(open + 1, close - open - 1), ',');
}

std::vector<FlagSpec> flags_of(const CLI::App& app) {
  std::vector<FlagSpec> flags;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_positional() && o->get_lnames().empty() && o->get_snames().empty()) continue;
    FlagSpec f;
    for (const std::string& s : o->get_snames())
      f.names.push_back("-" + s);
    for (const std::string& l : o->get_lnames())
      f.names.push_back("--" + l);
    if (f.names.empty()) continue;
    f.help = o->get_description();
    f.takes_value = o->get_expected_min() > 0;  // a flag expects no value
    if (f.takes_value) {
      f.choices = choices_of(*o);
      for (const std::string& n : f.names) {
        if (kPathFlags.count(n)) f.path = true;
        if (f.dynamic.empty()) f.dynamic = dynamic_values(n);
      }
    }
    flags.push_back(std::move(f));
  }
  return flags;
}

// What a command's positional arguments are: files (verify-wheel's wheels), or one of a fixed
// set (completion's shell).
void add_positional(const CLI::App& app, CommandSpecForCompletion& command) {
  for (const CLI::Option* o : app.get_options()) {
    if (!o->get_positional()) continue;
    command.positional_choices = choices_of(*o);
    command.takes_files = command.positional_choices.empty();
  }
}

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); });
}

// Text inside a zsh _arguments explanation ([...]): brackets and backslashes escaped, newlines
// flattened. (A _describe item's description may hold anything but a newline.)
std::string zsh_text(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

// `more` added to `flags`, but not the names `flags` has already (--help is everyone's).
void add_flags(std::vector<FlagSpec>& flags, const std::vector<FlagSpec>& more) {
  for (const FlagSpec& f : more) {
    const bool known = std::any_of(flags.begin(), flags.end(),
                                   [&](const FlagSpec& g) { return g.names == f.names; });
    if (!known) flags.push_back(f);
  }
}

std::vector<std::string> names_of(const std::vector<FlagSpec>& flags) {
  std::vector<std::string> names;
  for (const auto& f : flags)
    names.insert(names.end(), f.names.begin(), f.names.end());
  return names;
}

// The `case "$prev"` arms of one command: what a flag's value may be.
std::string bash_value_arms(const std::vector<FlagSpec>& flags, const std::string& indent) {
  std::string arms;
  for (const FlagSpec& f : flags) {
    if (!f.takes_value) continue;
    std::string action;
    if (!f.choices.empty()) {
      action = fmt::format("COMPREPLY=($(compgen -W {} -- \"$cur\"))",
                           text::shell_single_quoted(text::join(f.choices, " ")));
    } else if (!f.dynamic.empty()) {
      action = fmt::format("_sagebuild_values {}", f.dynamic);
    } else if (f.path) {
      action = "compopt -o filenames; COMPREPLY=($(compgen -f -- \"$cur\"))";
    } else {
      action = ":";  // a free value: nothing to offer
    }
    arms += fmt::format("{}{}) {}; return ;;\n", indent, text::join(f.names, "|"), action);
  }
  return arms;
}

}  // namespace

std::vector<CommandSpecForCompletion> describe_cli(const CLI::App& app) {
  std::vector<CommandSpecForCompletion> commands;
  commands.push_back({"", app.get_description(), flags_of(app)});
  for (const CLI::App* sub : visible_subcommands(app)) {
    commands.push_back({sub->get_name(), sub->get_description(), flags_of(*sub)});
    add_positional(*sub, commands.back());
    for (const CLI::App* nested : visible_subcommands(*sub)) {
      commands.push_back({sub->get_name() + " " + nested->get_name(), nested->get_description(),
                          flags_of(*nested)});
      add_positional(*nested, commands.back());
    }
  }
  return commands;
}

std::string bash_completion(const std::vector<CommandSpecForCompletion>& commands) {
  std::set<std::string> valued;  // every flag that takes a value, to skip it while scanning
  std::vector<std::string> top;
  std::set<std::string> parents;  // commands with commands of their own (cache)
  for (const auto& c : commands) {
    for (const auto& f : c.flags) {
      if (f.takes_value) valued.insert(f.names.begin(), f.names.end());
    }
    if (!c.name.empty() && c.name.find(' ') == std::string::npos) top.push_back(c.name);
    if (const std::size_t space = c.name.find(' '); space != std::string::npos) {
      parents.insert(c.name.substr(0, space));
    }
  }
  const CommandSpecForCompletion& global = commands.front();
  std::string s =
      R"SH(# bash completion for sagebuild, generated by `sagebuild completion bash` from its command
# line. Install: sagebuild completion bash > ~/.local/share/bash-completion/completions/sagebuild

# Values sagebuild lists itself (profiles, entries), from the matrix.yaml the line names.
_sagebuild_values() {
  local values
  values=$("${COMP_WORDS[0]}" "${_sagebuild_matrix[@]}" complete-values "$1" 2>/dev/null)
  COMPREPLY=($(compgen -W "$values" -- "$cur"))
}

_sagebuild() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local cmd="" sub="" i w
  _sagebuild_matrix=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case "$w" in
      --matrix) _sagebuild_matrix=(--matrix "${COMP_WORDS[i+1]}"); ((i++)) ;;
)SH";
  s += fmt::format("      {}) ((i++)) ;;\n",
                   text::join(std::vector<std::string>(valued.begin(), valued.end()), "|"));
  s += fmt::format(R"SH(      -*) ;;
      *) if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub && " {} " == *" $cmd "* ]]; then sub=$w; fi ;;
    esac
  done
)SH",
                   text::join(std::vector<std::string>(parents.begin(), parents.end()), " "));
  s += R"SH(
  case "$cmd${sub:+ $sub}" in
)SH";
  for (const auto& c : commands) {
    if (c.name.empty()) continue;
    // A nested command's parent takes its flags too (fallthrough): `cache prune --cache-dir`.
    std::vector<FlagSpec> flags = c.flags;
    std::vector<std::string> words;
    const std::size_t space = c.name.find(' ');
    if (space != std::string::npos) {
      for (const auto& p : commands) {
        if (p.name == c.name.substr(0, space)) add_flags(flags, p.flags);
      }
    } else {
      for (const auto& n : commands) {
        if (n.name.starts_with(c.name + " ")) words.push_back(n.name.substr(c.name.size() + 1));
      }
    }
    add_flags(flags, global.flags);
    s += fmt::format("    {})\n      case \"$prev\" in\n", text::shell_single_quoted(c.name));
    s += bash_value_arms(flags, "        ");
    s += "      esac\n";
    if (c.takes_files) s += "      [[ $cur != -* ]] && return  # file names: bash's own\n";
    if (!c.positional_choices.empty()) {
      s += fmt::format(
          "      [[ $cur != -* ]] && {{ COMPREPLY=($(compgen -W {} -- \"$cur\")); return; }}\n",
          text::shell_single_quoted(text::join(c.positional_choices, " ")));
    }
    std::vector<std::string> offered = names_of(flags);
    if (!words.empty()) {
      s += fmt::format(
          "      [[ -z $sub && $cur != -* ]] && {{ COMPREPLY=($(compgen -W {} -- \"$cur\")); "
          "return; }}\n",
          text::shell_single_quoted(text::join(words, " ")));
    }
    s += fmt::format("      COMPREPLY=($(compgen -W {} -- \"$cur\")) ;;\n",
                     text::shell_single_quoted(text::join(offered, " ")));
  }
  s += "    *)\n      case \"$prev\" in\n";
  s += bash_value_arms(global.flags, "        ");
  s += "      esac\n";
  std::vector<std::string> offered = top;
  for (const auto& n : names_of(global.flags))
    offered.push_back(n);
  s += fmt::format("      COMPREPLY=($(compgen -W {} -- \"$cur\")) ;;\n",
                   text::shell_single_quoted(text::join(offered, " ")));
  s += "  esac\n}\n\ncomplete -o default -F _sagebuild sagebuild\n";
  return s;
}

std::string zsh_completion(const std::vector<CommandSpecForCompletion>& commands) {
  auto specs = [](const std::vector<FlagSpec>& flags) {
    std::string out;
    for (const FlagSpec& f : flags) {
      for (const std::string& name : f.names) {
        std::string spec = name + "[" + zsh_text(f.help) + "]";
        if (f.takes_value) {
          if (!f.choices.empty()) {
            spec += ":value:(" + text::join(f.choices, " ") + ")";
          } else if (!f.dynamic.empty()) {
            spec += ":" + f.dynamic + ":{_sagebuild_values " + f.dynamic + "}";
          } else if (f.path) {
            spec += ":path:_files";
          } else {
            spec += ":value: ";
          }
        }
        out += " \\\n      " + text::shell_single_quoted(spec);
      }
    }
    return out;
  };
  const CommandSpecForCompletion& global = commands.front();
  std::string s = R"SH(#compdef sagebuild
# zsh completion for sagebuild, generated by `sagebuild completion zsh` from its command line.
# Install: sagebuild completion zsh > "${fpath[1]}/_sagebuild" (any directory on $fpath)

# Values sagebuild lists itself (profiles, entries), from the matrix.yaml the line names.
_sagebuild_values() {
  local -a values
  values=(${(f)"$(${_sagebuild_program:-sagebuild} $_sagebuild_matrix complete-values $1 2>/dev/null)"})
  compadd -a values
}

_sagebuild() {
  local curcontext="$curcontext" state line
  # The program as typed, and its --matrix, before _arguments narrows $words to the command.
  typeset -g _sagebuild_program=${words[1]}
  typeset -ga _sagebuild_matrix=()
  local at=${words[(I)--matrix]}
  (( at > 0 )) && _sagebuild_matrix=(--matrix ${words[at+1]})
  _arguments -C)SH";
  s += specs(global.flags);
  s += " \\\n      '1:command:->command' \\\n      '*::argument:->argument'\n";
  s += "  case $state in\n    command)\n      local -a commands\n      commands=(";
  for (const auto& c : commands) {
    if (c.name.empty() || c.name.find(' ') != std::string::npos) continue;
    s += "\n        " + text::shell_single_quoted(zsh_text(c.name) + ":" + zsh_text(c.help));
  }
  s += "\n      )\n      _describe -t commands 'sagebuild command' commands ;;\n";
  s += "    argument)\n      case $words[1] in\n";
  for (const auto& c : commands) {
    if (c.name.empty() || c.name.find(' ') != std::string::npos) continue;
    std::vector<const CommandSpecForCompletion*> nested;
    for (const auto& n : commands) {
      if (n.name.starts_with(c.name + " ")) nested.push_back(&n);
    }
    s += fmt::format("        {})\n", c.name);
    std::vector<FlagSpec> merged = c.flags;
    add_flags(merged, global.flags);
    const std::string shared = specs(merged);
    if (nested.empty()) {
      s += "          _arguments" + shared;
      if (c.takes_files) s += " \\\n      '*:file:_files'";
      if (!c.positional_choices.empty()) {
        s += " \\\n      '1:value:(" + text::join(c.positional_choices, " ") + ")'";
      }
      s += " ;;\n";
      continue;
    }
    std::vector<std::string> words;
    for (const auto* n : nested)
      words.push_back(n->name.substr(c.name.size() + 1));
    const std::string action = "'1:action:(" + text::join(words, " ") + ")'";
    s += "          case $words[2] in\n";
    for (const auto* n : nested) {
      std::vector<FlagSpec> all = n->flags;
      add_flags(all, merged);
      s += fmt::format("            {}) _arguments {}{} ;;\n", n->name.substr(c.name.size() + 1),
                       action, specs(all));
    }
    s += fmt::format("            *) _arguments {}{} ;;\n          esac ;;\n", action, shared);
  }
  s += "      esac ;;\n  esac\n}\n\n_sagebuild \"$@\"\n";
  return s;
}

}  // namespace sagebuild::cli
