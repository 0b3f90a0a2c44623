#include "platform/process.h"

#include <thread>

#include <catch2/catch.hpp>

namespace sagebuild::platform {
namespace {

TEST_CASE("output, exit codes and environment of a child", "[process]") {
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  REQUIRE(r);
  CHECK(r->exit_code == 3);
  CHECK_FALSE(r->ok());
  CHECK(r->output == "out\nerr\n");
  CHECK(r->last_line() == "err");
  auto env = run_process({"sh", "-c", "printf %s \"$SAGEBUILD_TEST_VALUE\""},
                         {.environment = {{"SAGEBUILD_TEST_VALUE", "42"}}});
  REQUIRE(env);
  CHECK(env->output == "42");
}

TEST_CASE("stdin is the null device and the working directory is honoured", "[process]") {
  auto r = run_process({"sh", "-c", "cat; pwd"}, {.working_directory = "/"});
  REQUIRE(r);
  CHECK(r->output == "/\n");
}

TEST_CASE("a timeout stops the whole process group", "[process]") {
  const auto start = std::chrono::steady_clock::now();
  auto r = run_process({"sh", "-c", "sleep 30 & sleep 30; echo never"},
                       {.timeout = std::chrono::milliseconds(300)});
  REQUIRE(r);
  CHECK(r->timed_out);
  CHECK(r->describe() == "timed out");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("request_stop stops children on other threads and refuses new ones", "[process]") {
  clear_stop();
  const auto start = std::chrono::steady_clock::now();
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    request_stop();
  });
  auto r = run_process({"sh", "-c", "sleep 30 & sleep 30; echo never"});
  stopper.join();
  REQUIRE(r);
  CHECK(r->cancelled);
  CHECK_FALSE(r->ok());
  CHECK(r->describe() == "stopped (interrupted)");
  CHECK(r->output.find("never") == std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  auto after = run_process({"sh", "-c", "echo started"});
  REQUIRE(after);
  CHECK(after->cancelled);
  CHECK(after->output.empty());
  clear_stop();
  auto again = run_process({"sh", "-c", "echo started"});
  REQUIRE(again);
  CHECK(again->ok());
}

TEST_CASE("a program that does not exist is an error that names it", "[process]") {
  auto r = run_process({"sagebuild-no-such-program"});
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "cannot run 'sagebuild-no-such-program': not found in PATH");
}

TEST_CASE("only the tail of long output is kept", "[process]") {
  auto r =
      run_process({"sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line$i; i=$((i+1)); done"},
                  {.keep_output = 100});
  REQUIRE(r);
  CHECK(r->output.size() == 100);
  CHECK(r->last_line() == "line19999");
}

}  // namespace
}  // namespace sagebuild::platform
