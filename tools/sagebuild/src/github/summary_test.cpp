#include "github/summary.h"

#include <catch2/catch.hpp>

#include "util/json_text.h"

namespace sagebuild::github {
namespace {

nlohmann::json built(int i) {
  return {{"entry", "linux-" + std::to_string(i)},
          {"status", "built"},
          {"wheel", "w" + std::to_string(i) + ".whl"},
          {"torch", "2.8.0"},
          {"cuda", "12.9.1"},
          {"python", "3.12"},
          {"platform", "linux_x86_64"},
          {"size", 2000000},
          {"sha256", "0123456789abcdef0123"},
          {"seconds", 30.0},
          {"checks", 33}};
}

TEST_CASE("a summary lists wheels and failures with their first lines", "[summary]") {
  const std::string md = summary_markdown(
      {built(1),
       {{"entry", "linux-bad"},
        {"status", "build_failed"},
        {"log", "build/logs/linux-bad.log"},
        {"message", "the build failed (exit code 2)\nline 2\nline 3\nline 4\nline 5\nline 6"}}});
  CHECK(md.starts_with("## sagebuild: 1 wheel ready, 1 failed (2.0 MB)\n"));
  CHECK(md.find("| `w1.whl` | 2.8.0 | 12.9.1 | 3.12 | linux_x86_64 | 2.0 MB | `0123456789abcdef` | "
                "30 s | 0 s | - | 33 checks passed |") != std::string::npos);
  CHECK(md.find("**linux-bad** (build failed): build/logs/linux-bad.log") != std::string::npos);
  CHECK(md.find("line 5") != std::string::npos);
  CHECK(md.find("line 6") == std::string::npos);  // first lines only
}

TEST_CASE("a wheel's row shows its compile time and what the caches gave", "[summary]") {
  nlohmann::json r = built(1);
  r["phases"] = {
      {"toolchain", 1.0}, {"kernels", 100.0}, {"binding", 20.0}, {"wheel", 9.4}, {"verify", 5.0}};
  r["kernel_cache_hit"] = false;
  r["compile_cache"] = {{"compiles", 33},
                        {"local_hits", 1},
                        {"remote_hits", 31},
                        {"compiled", 1},
                        {"remote_errors", 0}};
  std::string md = summary_markdown({r});
  CHECK(md.find("| 30 s | 129 s | kernels compiled; 32/33 ccache hits, 31 remote | 33 checks") !=
        std::string::npos);
  r["kernel_cache_hit"] = true;
  r["compile_cache"] = {{"compiles", 2}, {"compiled", 2}, {"remote_errors", 2}};
  md = summary_markdown({r});
  CHECK(md.find("| kernels cached; 0/2 ccache hits, 2 remote errors |") != std::string::npos);
  r["compile_cache"] = "garbage";  // a results file is input: never a crash
  CHECK(summary_markdown({r}).find("| kernels cached |") != std::string::npos);
}

TEST_CASE("up-to-date wheels count as ready; interrupted entries are named so", "[summary]") {
  nlohmann::json same = built(2);
  same["status"] = "up_to_date";
  const std::string md = summary_markdown(
      {same,
       {{"entry", "linux-stopped"},
        {"status", "interrupted"},
        {"log", "x.log"},
        {"message", "interrupted (Ctrl-C) during kernels"}},
       {{"entry", "linux-later"}, {"status", "not_started"}, {"message", "not started"}}});
  CHECK(md.starts_with("## sagebuild: 1 wheel ready, 2 failed"));
  CHECK(md.find("| 30 s | 0 s | - | up to date (not rebuilt) |") != std::string::npos);
  CHECK(md.find("**linux-stopped** (interrupted): x.log") != std::string::npos);
  CHECK(md.find("**linux-later** (not started)") != std::string::npos);
}

TEST_CASE("large matrices stay under the step-summary limit", "[summary]") {
  std::vector<nlohmann::json> many;
  for (int i = 0; i < 20000; ++i)
    many.push_back(built(i));
  const std::string md = summary_markdown(many);
  CHECK(md.size() < kStepSummaryLimit);
  CHECK(md.find("left out to stay under GitHub's 1 MiB step-summary limit") != std::string::npos);
  CHECK(md.starts_with("## sagebuild: 20000 wheels ready, 0 failed"));
}

TEST_CASE("table cells cannot break the table", "[summary]") {
  nlohmann::json r = built(1);
  r["wheel"] = "a|b\nc.whl";
  CHECK(summary_markdown({r}).find("`a\\|b c.whl`") != std::string::npos);
}

// The crash cases of a hostile results file, here so that they run under the sanitizers too.
TEST_CASE("fields of the wrong type are shown as text, never a crash", "[summary]") {
  nlohmann::json r = built(1);
  r["size"] = "abc";
  r["seconds"] = nlohmann::json::array({1, 2});
  r["checks"] = "many";
  r["torch"] = 2.8;
  const std::string md = summary_markdown({r});
  CHECK(md.find("`w1.whl`") != std::string::npos);
}

TEST_CASE("a failure message cannot close its code block", "[summary]") {
  const std::string md = summary_markdown({{{"entry", "linux-bad"},
                                            {"status", "build_failed"},
                                            {"log", "x.log"},
                                            {"message", "error\n```\n## injected heading"}}});
  // The fence that opens the block is longer than any run of backticks inside it.
  const auto open = md.find("````");
  REQUIRE(open != std::string::npos);
  CHECK(md.find("## injected heading") > open);
  CHECK(md.find("````", open + 4) != std::string::npos);
}

TEST_CASE("a results document nested 100,000 deep is refused, not recursed", "[summary]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(parse_json_bounded(deep).is_discarded());
  const std::string shallow = std::string(60, '[') + std::string(60, ']');
  CHECK_FALSE(parse_json_bounded(shallow).is_discarded());
}

}  // namespace
}  // namespace sagebuild::github
