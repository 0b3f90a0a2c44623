#include "cli/log_safe_stream.h"

#include <sstream>

#include <catch2/catch.hpp>

namespace sagebuild::cli {
namespace {

std::string through_filter(const std::string& text, LogSafeBuffer::Controls controls) {
  std::ostringstream sink;
  {
    LogSafeStream safe(sink, controls);
    sink << text;
  }
  return sink.str();
}

TEST_CASE("text from elsewhere cannot run a workflow command", "[log]") {
  using C = LogSafeBuffer::Controls;
  for (const std::string command :
       {"::add-mask::secret", "  ::error::forged", "\t::warning x", "::stop-commands::tok"}) {
    INFO(command);
    const std::string out = through_filter("ok\n" + command + "\nafter\n", C::escape);
    CHECK(out.find("\n| ") != std::string::npos);
    for (std::size_t at = out.find('\n'); at != std::string::npos; at = out.find('\n', at + 1)) {
      const std::size_t first = out.find_first_not_of(" \t", at + 1);
      CHECK_FALSE((first != std::string::npos && out.compare(first, 2, "::") == 0));
    }
  }
  CHECK(through_filter("name ##[error]x\n", C::escape) == "name ##\\u005berror]x\n");
  // Escape sequences and carriage returns are shown, not obeyed, off a terminal.
  CHECK(through_filter("a\x1b[2Jb\rc\n", C::escape) == "a\\x1b[2Jb\\x0dc\n");
  // On a terminal too: only sagebuild's own sequences reach it.
  CHECK(through_filter("a\x1b[1A\x1b[2Kb\x07\n", C::keep) == "a\\x1b[1A\\x1b[2Kb\\x07\n");
  CHECK(
      through_filter("a" + terminal_control("\x1b[32m") + "ok" + terminal_control("\x1b[0m") + "\n",
                     C::keep) == "a\x1b[32mok\x1b[0m\n");
  CHECK(through_filter("a" + terminal_control("\x1b[32m") + "ok\n", C::escape) == "aok\n");
  CHECK(through_filter(terminal_control("\x1b[1A") + "x\n", C::keep) == "\x1b[1Ax\n");
  const std::string forged = std::string("\x1f") + "0123456789abcdef" + "\x1f";
  CHECK(through_filter(forged + "\x1b[2J" + forged + "\n", C::keep).find("\\x1b[2J") !=
        std::string::npos);
  // The mark cannot be forged, and white space the runner trims (no-break space) is skipped.
  CHECK(through_filter("\x1e::add-mask::x\n", C::escape).starts_with("| "));
  CHECK(through_filter("\x1e::add-mask::x\n", C::keep).starts_with("| "));
  CHECK(through_filter("\xc2\xa0::add-mask::x\n", C::escape).starts_with("| "));
  // sagebuild's own commands pass as they are; an unfinished last line is written at the end.
  CHECK(through_filter(workflow_command("::group::x") + "\ntail", C::escape) == "::group::x\ntail");
}

}  // namespace
}  // namespace sagebuild::cli
