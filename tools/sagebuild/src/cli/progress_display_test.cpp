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

}  // namespace
}  // namespace sagebuild::cli
