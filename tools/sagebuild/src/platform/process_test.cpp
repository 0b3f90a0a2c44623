#include "platform/process.h"

#include <thread>

#include <catch2/catch.hpp>

#include "util/fs.h"

namespace sagebuild::platform {
namespace {

// One behaviour, in the platform's own shell: sh on POSIX, cmd.exe on Windows (where the tests run
// the Win32 process layer under Wine: scripts/windows-test.sh).
std::vector<std::string> shell([[maybe_unused]] const std::string& posix,
                               [[maybe_unused]] const std::string& windows) {
#ifdef _WIN32
  return {"cmd.exe", "/d", "/s", "/c", windows};
#else
  return {"sh", "-c", posix};
#endif
}

// Output with Windows' line ends as "\n".
std::string lf(std::string text) {
  for (std::size_t at; (at = text.find("\r\n")) != std::string::npos;)
    text.erase(at, 1);
  return text;
}

// Leaves no stop request behind, also when a check fails and throws.
struct StopCleared {
  StopCleared() { clear_stop(); }
  ~StopCleared() { clear_stop(); }
};

TEST_CASE("output, exit codes and environment of a child", "[process]") {
  auto r = run_process(shell("echo out; echo err >&2; exit 3", "echo out& >&2 echo err& exit 3"));
  REQUIRE(r);
  CHECK(r->exit_code == 3);
  CHECK_FALSE(r->ok());
  CHECK(lf(r->output) == "out\nerr\n");
  CHECK(r->last_line() == "err");
  auto env =
      run_process(shell("printf %s \"$SAGEBUILD_TEST_VALUE\"", "echo %SAGEBUILD_TEST_VALUE%"),
                  {.environment = {{"SAGEBUILD_TEST_VALUE", "42"}}});
  REQUIRE(env);
  CHECK(env->last_line() == "42");
}

TEST_CASE("stdin is the null device and the working directory is honoured", "[process]") {
  fs::TempDir dir("sagebuild-process");
  // `cat` and `set /p` read standard input: the null device ends them at once.
  auto r = run_process(shell("cat; pwd -P", "set /p line=& cd"), {.working_directory = dir.path()});
  REQUIRE(r);
  CHECK(std::filesystem::equivalent(r->last_line(), dir.path()));
  CHECK(lf(r->output) == r->last_line() + "\n");
}

TEST_CASE("a timeout stops the whole process group", "[process]") {
  const auto start = std::chrono::steady_clock::now();
  auto r = run_process(
      shell("sleep 30 & sleep 30; echo never",
            "start /b ping -n 30 127.0.0.1 >nul& ping -n 30 127.0.0.1 >nul& echo never"),
      {.timeout = std::chrono::milliseconds(300)});
  REQUIRE(r);
  CHECK(r->timed_out);
  CHECK(r->describe() == "timed out");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("request_stop stops children on other threads and refuses new ones", "[process]") {
  const StopCleared cleared;
  const auto start = std::chrono::steady_clock::now();
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    request_stop();
  });
  auto r = run_process(
      shell("sleep 30 & sleep 30; echo never",
            "start /b ping -n 30 127.0.0.1 >nul& ping -n 30 127.0.0.1 >nul& echo never"));
  stopper.join();
  REQUIRE(r);
  CHECK(r->cancelled);
  CHECK_FALSE(r->ok());
  CHECK(r->describe() == "stopped (interrupted)");
  CHECK(r->output.find("never") == std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  auto after = run_process(shell("echo started", "echo started"));
  REQUIRE(after);
  CHECK(after->cancelled);
  CHECK(after->output.empty());
  clear_stop();
  auto again = run_process(shell("echo started", "echo started"));
  REQUIRE(again);
  CHECK(again->ok());
}

TEST_CASE("a program that does not exist is an error that names it", "[process]") {
  auto r = run_process({"sagebuild-no-such-program"});
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "cannot run 'sagebuild-no-such-program': not found in PATH");
}

TEST_CASE("only the tail of long output is kept", "[process]") {
  auto r = run_process(shell("i=0; while [ $i -lt 20000 ]; do echo line$i; i=$((i+1)); done",
                             "for /l %i in (0,1,19999) do @echo line%i"),
                       {.keep_output = 100});
  REQUIRE(r);
  CHECK(r->output.size() == 100);
  CHECK(r->last_line() == "line19999");
}

TEST_CASE("a log names the command it ran, ready to paste, with secrets hidden", "[process]") {
  const ProcessOptions options{
      .working_directory = "/tmp/a dir",
      .environment = {{"CUDA_HOME", "/usr/local/cuda"},
                      {"PIP_INDEX_URL", "https://user:s3cret@example.invalid/simple"},
                      {"TWINE_PASSWORD", "hunter2"}}};
  const std::string line = command_for_log({"python", "-m", "pip", "it's"}, options);
  CHECK(
      line ==
      "$ cd '/tmp/a dir' && CUDA_HOME=/usr/local/cuda "
      "PIP_INDEX_URL='https://user:***@example.invalid/simple' TWINE_PASSWORD='***' python -m pip "
      "'it'\\''s'");
  CHECK(line.find("s3cret") == std::string::npos);
  CHECK(line.find("hunter2") == std::string::npos);
}

TEST_CASE("the log sees each command and each line of its output", "[process]") {
  std::vector<std::string> seen;
  const auto to_log = [&](std::string_view line) { seen.emplace_back(line); };
  // "\r" ends a line as "\n" does (a progress bar redrawn); cmd.exe ends each with "\r\n".
  auto r =
      run_process(shell("echo one; printf 'two\\rthree'", "echo one& echo two& <nul set /p=three"),
                  {.log = to_log});
  auto unlogged = run_process(shell("echo not logged", "echo not logged"));
  REQUIRE(r);
  REQUIRE(unlogged);
  REQUIRE(seen.size() == 4);
#ifdef _WIN32
  CHECK(seen[0].starts_with("sagebuild: $ cmd.exe /d /s /c "));
#else
  CHECK(seen[0] == "sagebuild: $ sh -c 'echo one; printf '\\''two\\rthree'\\'''");
#endif
  CHECK(seen[1] == "one");
  CHECK(seen[2] == "two");
  CHECK(seen[3] == "three");  // the last line, without its newline, at the end
}

// (Its lines are masked as the log's are: the same function, tested in util/secrets.)
TEST_CASE("on_line sees each whole line of one process's output, bounded", "[process]") {
  std::vector<std::string> seen;
  auto r = run_process(shell("echo one; printf 'two\\rthree\\n'; echo four; "
                             "head -c 70000 /dev/zero | tr '\\0' x; printf '\\nlast'",
                             "echo one& echo two& echo three& echo four& <nul set /p=last"),
                       {.on_line = [&](std::string_view line) { seen.emplace_back(line); }});
  REQUIRE(r);
  REQUIRE(seen.size() >= 5);
  CHECK(seen[0] == "one");
  CHECK(seen[1] == "two");
  CHECK(seen[2] == "three");
  CHECK(seen[3] == "four");
  CHECK(seen.back() == "last");  // the last line, without its newline, at the end
  for (const std::string& line : seen)
    CHECK(line.size() <= std::size_t{64} * 1024);  // a line without an end is cut, not kept
}

}  // namespace
}  // namespace sagebuild::platform
