// A command is one file of cli/commands/ and one row of command_table() (commands.h): every row
// has the file that defines its factory, and every file of the folder defines the factory of a
// row (the build takes every file there, so a command without a row would be dead code).
#include "cli/commands/commands.h"

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "test_support.h"

namespace sagebuild::cli {
namespace {

TEST_CASE("each command is one file of cli/commands and one row of the table", "[commands]") {
  const auto folder = testing::source_dir() / "tools/sagebuild/src/cli/commands";
  // Which file defines (not declares) each make_<name>_command.
  std::map<std::string, std::string> defined_in;
  const std::regex factory(
      R"(std::unique_ptr<Command>\s+(make_[a-z_]+_command)\s*\(\s*const Context&\s*\w*\s*\)\s*\{)");
  for (const auto& file : std::filesystem::directory_iterator(folder)) {
    const std::string name = file.path().filename().string();
    if (file.path().extension() != ".cpp" || name.ends_with("_test.cpp")) continue;
    const std::string text = testing::read_text(file.path());
    for (std::sregex_iterator it(text.begin(), text.end(), factory), end; it != end; ++it)
      defined_in[(*it)[1]] = name;
  }
  std::set<std::string> rows, names;
  for (const CommandSpec& spec : command_table()) {
    CAPTURE(spec.name);
    CHECK(names.insert(spec.name).second);
    std::string factory_name = std::string("make_") + spec.name + "_command";
    for (char& c : factory_name)
      if (c == '-') c = '_';
    rows.insert(factory_name);
    REQUIRE(defined_in.count(factory_name));
    // Named after the command, or (a hidden helper) beside the command it serves.
    if (!spec.hidden) {
      std::string file = std::string(spec.name) + ".cpp";
      for (char& c : file)
        if (c == '-') c = '_';
      CHECK(defined_in[factory_name] == file);
    }
  }
  std::set<std::string> files_with_a_row;
  for (const auto& [factory_name, file] : defined_in) {
    CAPTURE(factory_name, file);
    CHECK(rows.count(factory_name));  // a command file whose command has no row
    files_with_a_row.insert(file);
  }
  for (const auto& file : std::filesystem::directory_iterator(folder)) {
    const std::string name = file.path().filename().string();
    if (file.path().extension() != ".cpp" || name.ends_with("_test.cpp") || name == "commands.cpp")
      continue;
    CAPTURE(name);
    CHECK(files_with_a_row.count(name));  // every file of the folder is a command's
  }
}

}  // namespace
}  // namespace sagebuild::cli
