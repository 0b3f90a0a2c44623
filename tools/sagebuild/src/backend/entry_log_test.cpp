#include "backend/entry_log.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "util/fs.h"

namespace sagebuild::backend {
namespace {

// Records what reached the sink, per log name.
class RecordedStatus final : public Status {
 public:
  void phase(const std::string& id, const std::string& phase) override {
    add(id, "phase " + phase);
  }
  void note(const std::string& id, const std::string& line) override { add(id, "note " + line); }
  void log_line(const std::string& id, std::string_view line) override {
    add(id, "log " + std::string(line));
  }
  void finished(const std::string& id, bool, const std::string& line) override {
    add(id, "end " + line);
  }
  void stop() override {}
  std::map<std::string, std::vector<std::string>> seen;

 private:
  void add(const std::string& id, std::string line) {
    std::lock_guard lock(mutex_);
    seen[id].push_back(std::move(line));
  }
  std::mutex mutex_;
};

}  // namespace

TEST_CASE("an entry's log: every line to its file and to the status sink", "[entry_log]") {
  fs::TempDir dir("sagebuild-entry-log");
  const auto path = dir.path() / "logs" / "linux-x.log";
  RecordedStatus status;
  std::filesystem::path kept;
  {
    EntryLog log(status, "linux-x", path);
    log.phase("kernels");
    log.note("kernel cache hit");
    // What run_process and the layers below hand on (process_test: the command, then lines).
    const platform::LogLines sink = log.sink();
    sink("sagebuild: $ cmake --build .");
    sink("[1/2] nvcc a.cu");
    log.text("report line 1\nreport line 2\n");
    // While it runs the log is the partial; the name it will have does not exist yet.
    CHECK(std::filesystem::exists(path.string() + ".partial"));
    CHECK_FALSE(std::filesystem::exists(path));
    kept = log.keep();
  }
  CHECK(kept == path);
  CHECK_FALSE(std::filesystem::exists(path.string() + ".partial"));
  auto text = fs::read_file(path);
  REQUIRE(text);
  CHECK(*text ==
        "== kernels\nsagebuild: kernel cache hit\nsagebuild: $ cmake --build .\n"
        "[1/2] nvcc a.cu\nreport line 1\nreport line 2\n");
  // Phases and notes reach the status once, as themselves.
  const std::vector<std::string> expected = {
      "phase kernels",       "note kernel cache hit", "log sagebuild: $ cmake --build .",
      "log [1/2] nvcc a.cu", "log report line 1",     "log report line 2"};
  CHECK(status.seen["linux-x"] == expected);
}

TEST_CASE("a discarded log leaves the last finished one as it was", "[entry_log]") {
  fs::TempDir dir("sagebuild-entry-log");
  const auto path = dir.path() / "linux-x.log";
  REQUIRE(fs::write_file_atomic(path, "the last build\n"));
  RecordedStatus status;
  EntryLog log(status, "linux-x", path);
  log.note("up to date");
  log.discard();
  CHECK_FALSE(std::filesystem::exists(path.string() + ".partial"));
  CHECK(fs::read_file(path).value() == "the last build\n");
}

}  // namespace sagebuild::backend
