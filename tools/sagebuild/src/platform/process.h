// Running child processes. One header; the implementation is chosen by CMake
// (process_posix.cpp here; a Win32 one joins it with the MSVC backend). Nothing else in the tree
// spawns processes or says #ifdef _WIN32 about it.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/expected.h"

namespace sagebuild::platform {

// Where a log's lines go (a file and the status sink: backend::EntryLog), one whole line per call.
using LogLines = std::function<void(std::string_view line)>;

struct ProcessOptions {
  std::filesystem::path working_directory = {};  // empty: inherit
  // Variables to set (or, with an empty value and unset = true, remove) on top of ours.
  std::vector<std::pair<std::string, std::string>> environment = {};
  std::vector<std::string> unset = {};
  std::chrono::milliseconds timeout{0};  // 0: no limit
  std::size_t keep_output =
      std::size_t{64} * 1024;  // the last bytes of stdout+stderr kept in the result
  // The process's log, when set: handed the command as it runs ("sagebuild: $ ...", as
  // command_for_log writes it, secrets masked), then each whole line of its output. Whoever sets
  // it decides where the lines go (backend::EntryLog: a file and the status sink).
  LogLines log = {};
  // Called with each whole line of output, on the thread that runs the process. For both
  // callbacks "\r" ends a line too, a line is cut at 64 KiB, and secrets are masked.
  std::function<void(std::string_view line)> on_line = {};
};

struct ProcessResult {
  int exit_code = -1;      // when the child exited
  int signal = 0;          // when a signal ended it
  bool timed_out = false;  // stopped by us at the timeout
  bool cancelled = false;  // stopped by us because request_stop() was called
  std::string output;      // stdout and stderr interleaved (the tail: keep_output bytes)

  bool ok() const { return exit_code == 0 && signal == 0 && !timed_out && !cancelled; }
  std::string describe() const;  // "exit code 1", "killed by signal 9", "timed out", "stopped"
  std::string last_line() const;
};

// Runs argv[0] (looked up in PATH) in its own process group with stdin from the null device and
// stdout+stderr captured. Errors are for failures to start it ("cannot run 'x': No such file").
Expected<ProcessResult> run_process(const std::vector<std::string>& argv,
                                    const ProcessOptions& options = {});

// Stopping everything (Ctrl-C): after request_stop(), every run_process in flight, on any thread,
// stops its child's whole process group (SIGTERM, then SIGKILL after two seconds) and returns
// with `cancelled` set, and new calls return that at once without starting anything.
// request_stop() is async-signal-safe: a SIGINT handler may call it. `cause` (a string literal)
// says what asked, for the messages: "Ctrl-C (SIGINT)", "SIGTERM"; the first cause is kept.
void request_stop(const char* cause = nullptr) noexcept;
bool stop_requested() noexcept;
const char* stop_cause() noexcept;  // "a stop request" when none was given
void clear_stop() noexcept;         // for tests, and for a tool that goes on after an interruption

// A command as the logs show it, ready to paste into a POSIX shell:
// "$ cd DIR && NAME=value ... program args", each word quoted where it needs to be, credentials
// in URLs masked and the values of secret-looking variables (TOKEN, PASSWORD, SECRET, KEY, AUTH)
// hidden. run_process hands it to ProcessOptions::log before the child's output.
std::string command_for_log(const std::vector<std::string>& argv, const ProcessOptions& options);

// The first executable named `program` in PATH.
std::optional<std::filesystem::path> find_in_path(std::string_view program);

}  // namespace sagebuild::platform
