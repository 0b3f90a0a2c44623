#include "cli/progress_display.h"

#include <sstream>

#include <catch2/catch.hpp>

#include "cli/log_safe_stream.h"

namespace sagebuild::cli {
namespace {

// What reaches a terminal: the display's output through the filter every stream has
// (cli/log_safe_stream.h), which passes the display's own marked sequences.
std::string show(ProgressStyle style, ProgressOptions options) {
  std::ostringstream out;
  {
    const LogSafeStream filter(out, LogSafeBuffer::Controls::keep);
    auto progress = make_progress(style, out, options);
    progress->phase("linux-a", "kernels");
    progress->note("linux-a", "kernel cache hit");
    progress->log_line("linux-a", "$ cmake --build .");
    progress->finished("linux-a", true, "built");
    progress->phase("linux-b", "toolchain");
    progress->finished("linux-b", false, "no CUDA 12.9 toolkit");
    progress->stop();
  }
  return out.str();
}

TEST_CASE("the live display colours its marks unless NO_COLOR asks it not to", "[progress]") {
  const std::string colour = show(ProgressStyle::live, {.color = true});
  CHECK(colour.find("\033[32m✓\033[0m linux-a: built") != std::string::npos);
  CHECK(colour.find("\033[31m✗\033[0m linux-b: no CUDA 12.9 toolkit") != std::string::npos);
  const std::string plain = show(ProgressStyle::live, {.color = false});
  CHECK(plain.find("✓ linux-a: built") != std::string::npos);
  CHECK(plain.find("✗ linux-b: no CUDA 12.9 toolkit") != std::string::npos);
  // Cursor movement stays (it redraws the running rows); colour codes do not.
  CHECK(plain.find("\033[3") == std::string::npos);
  CHECK(plain.find("\033[0m") == std::string::npos);
}

TEST_CASE("a quiet build shows only the entries that failed, in every style", "[progress]") {
  for (const ProgressStyle style :
       {ProgressStyle::plain, ProgressStyle::live, ProgressStyle::github}) {
    const std::string out = show(style, {.color = false, .quiet = true});
    INFO(out);
    CHECK(out.find("linux-a") == std::string::npos);
    CHECK(out.find("kernel cache hit") == std::string::npos);
    CHECK(out.find("no CUDA 12.9 toolkit") != std::string::npos);
  }
  const std::string normal = show(ProgressStyle::plain, {});
  CHECK(normal.find("[linux-a] kernel cache hit\n") != std::string::npos);
  CHECK(normal.find("[linux-a] built\n") != std::string::npos);
}

TEST_CASE("an entry's log lines show only when asked, where the style puts them", "[progress]") {
  for (const ProgressStyle style :
       {ProgressStyle::plain, ProgressStyle::live, ProgressStyle::github}) {
    INFO(static_cast<int>(style));
    CHECK(show(style, {.color = false}).find("cmake --build") == std::string::npos);
    CHECK(show(style, {.color = false, .logs = LogEcho::as_notes}).find("$ cmake --build .") !=
          std::string::npos);
    // --quiet wins: only failures.
    CHECK(show(style, {.color = false, .quiet = true, .logs = LogEcho::as_notes})
              .find("cmake --build") == std::string::npos);
  }
  // GitHub: as notes inside the entry's group; at once, before the group is printed.
  const std::string grouped = show(ProgressStyle::github, {.logs = LogEcho::as_notes});
  CHECK(grouped.find("kernel cache hit\n$ cmake --build .\n") != std::string::npos);
  const std::string at_once = show(ProgressStyle::github, {.logs = LogEcho::at_once});
  CHECK(at_once.find("[linux-a] $ cmake --build .\n") != std::string::npos);
  CHECK(at_once.find("[linux-a] $ cmake --build .") < at_once.find("::group::"));
}

}  // namespace
}  // namespace sagebuild::cli
