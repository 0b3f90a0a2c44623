#include "util/log.h"

#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace sagebuild {
namespace {

struct Written {
  std::string out, err;
};

Written say_everything(Log::Level shown) {
  std::ostringstream out, err;
  Log log(out, err, shown);
  log.result("result {}\n", 1);
  log.info("info {}\n", 2);
  log.detail("detail {}\n", 3);
  log.warning("warning {}\n", 4);
  log.error("error {}\n", 5);
  return {out.str(), err.str()};
}

TEST_CASE("each level goes where -q, the default and -v say", "[log]") {
  const Written quiet = say_everything(Log::Level::warning);
  CHECK(quiet.out == "result 1\n");
  CHECK(quiet.err == "warning 4\nerror 5\n");
  const Written normal = say_everything(Log::Level::info);
  CHECK(normal.out == "result 1\ninfo 2\n");
  CHECK(normal.err == "warning 4\nerror 5\n");
  const Written verbose = say_everything(Log::Level::detail);
  CHECK(verbose.out == "result 1\ninfo 2\ndetail 3\n");
  CHECK(verbose.err == "warning 4\nerror 5\n");
}

TEST_CASE("the level can be set after the log is made (the flags are read later)", "[log]") {
  std::ostringstream out, err;
  Log log(out, err, Log::Level::info);
  CHECK_FALSE(log.quiet());
  CHECK_FALSE(log.verbose());
  log.show(Log::Level::detail);
  CHECK(log.verbose());
  CHECK(log.shows(Log::Level::detail));
  log.show(Log::Level::warning);
  CHECK(log.quiet());
  CHECK_FALSE(log.shows(Log::Level::info));
  CHECK(log.shows(Log::Level::error));
}

TEST_CASE("lines written from many threads at once arrive whole", "[log]") {
  std::ostringstream out, err;
  Log log(out, err, Log::Level::detail);
  constexpr int kThreads = 8, kLines = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < kLines; ++i)
        log.info("[thread {}] line {} {}\n", t, i, std::string(static_cast<std::size_t>(64), 'x'));
    });
  }
  for (auto& thread : threads)
    thread.join();
  std::istringstream lines(out.str());
  std::string line;
  std::vector<int> next(kThreads, 0);
  int count = 0;
  while (std::getline(lines, line)) {
    int t = -1, i = -1;
    char tail[80] = {};
    REQUIRE(std::sscanf(line.c_str(), "[thread %d] line %d %79s", &t, &i, tail) == 3);
    REQUIRE(t >= 0);
    REQUIRE(t < kThreads);
    CHECK(i == next[static_cast<std::size_t>(t)]++);  // each thread's lines in its order
    CHECK(std::string(tail) == std::string(64, 'x'));
    ++count;
  }
  CHECK(count == kThreads * kLines);
}

}  // namespace
}  // namespace sagebuild
