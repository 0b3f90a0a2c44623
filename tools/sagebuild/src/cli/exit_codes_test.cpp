// exit_codes.h: every kind of failure has the exit code docs/cli.md's table gives it, and an
// error keeps the kind it was given on its way up to the command.
#include "cli/exit_codes.h"

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "cli/command.h"

namespace sagebuild::cli {
namespace {

// docs/cli.md's "Exit codes" table: code -> the first word of its meaning.
std::map<int, std::string> documented_codes() {
  std::ifstream in(std::string(SAGEBUILD_SOURCE_DIR) + "/docs/cli.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto start = doc.find("## Exit codes");
  REQUIRE(start != std::string::npos);
  const std::string table = doc.substr(start, doc.find("\n## ", start + 1) - start);
  std::map<int, std::string> codes;
  const std::regex row(R"(\n\| (\d+) \| (\w+))");
  for (std::sregex_iterator it(table.begin(), table.end(), row), end; it != end; ++it)
    codes[std::stoi((*it)[1])] = (*it)[2];
  return codes;
}

TEST_CASE("each kind of failure ends a command with its documented exit code", "[cli]") {
  const auto documented = documented_codes();
  const std::map<ErrorKind, std::string> meaning = {
      {ErrorKind::usage, "usage"},      {ErrorKind::config, "configuration"},
      {ErrorKind::build, "build"},      {ErrorKind::verify, "verification"},
      {ErrorKind::publish, "release"},  {ErrorKind::interrupted, "interrupted"},
      {ErrorKind::internal, "internal"}};
  for (const auto& [kind, word] : meaning) {
    const int code = exit_code_for(kind);
    INFO("exit code " << code);
    REQUIRE(documented.count(code) == 1);
    CHECK(documented.at(code) == word);
  }
  // An error nobody classified is a bug in sagebuild, not the user's.
  CHECK(exit_code_for(ErrorKind::unclassified) == kInternalError);
}

TEST_CASE("an error keeps its kind; a caller classifies only an unclassified one", "[cli]") {
  const Error plain{"cannot write x"};
  CHECK(plain.kind == ErrorKind::unclassified);
  CHECK(plain.as(ErrorKind::usage).kind == ErrorKind::usage);
  CHECK(plain.as(ErrorKind::usage).message == "cannot write x");
  const Error stopped{"GET https://example.invalid/: interrupted", ErrorKind::interrupted};
  CHECK(stopped.as(ErrorKind::publish).kind == ErrorKind::interrupted);
  CHECK(CommandError(stopped.as(ErrorKind::publish)).code() == kInterrupted);
  CHECK(CommandError(plain.as(ErrorKind::config)).code() == kConfigError);
}

}  // namespace
}  // namespace sagebuild::cli
